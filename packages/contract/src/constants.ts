// Business constants (the spec's "Business constants and limits") and the limits we chose where the spec is silent
// (docs/api.md).

export const defaults = {
  pageSize: 10,
  cardPageSize: 5,
  toastDurationMs: 3000,
  http: { backendProto: 'http', backendPort: 80 },
  tcp: { proto: 'tcp', backendPort: 1883 },
} as const;

export const limits = {
  nameMax: 64,
  usernameMax: 64,
  passwordMin: 12,
  passwordMax: 256,
  listMaxLimit: 100,
  logMaxLines: 1000,
  /** Subnets one gateway node may route (a LAN, a VLAN or two: each is a route and an AllowedIPs entry). */
  gatewayNetworksMax: 16,
  /** Clock skew tolerated when checking that an expiry is not in the past. */
  expirySkewMs: 60_000,
  /** A service's temporary exposure (`ttl`, seconds): at least a minute, at most a year. */
  serviceTtlMinSeconds: 60,
  serviceTtlMaxSeconds: 366 * 24 * 3600,
} as const;

export const timing = {
  logReconnectMs: 1000,
  copyResetMs: 2000,
  autocompleteDebounceMs: 300,
  selectBlurCloseMs: 150,
  sseHeartbeatMs: 15_000,
} as const;

export const storageKeys = {
  /** The spec's session cookie: what the server sets over plain HTTP (development), scoped to /api. */
  tokenCookie: 'token',
  /**
   * The session cookie over HTTPS (docs/api.md "Session cookie"): the `__Host-` prefix makes browsers refuse it from
   * any other host (no Domain attribute), so a sibling or parent domain cannot plant or shadow it.
   */
  secureTokenCookie: '__Host-token',
  sidebarExpanded: 'sidebar-expanded',
  theme: 'theme',
  redirect: 'redirect',
} as const;

export const themes = ['light', 'dark', 'auto'] as const;
export type Theme = (typeof themes)[number];

export const ESCAPE_KEY_CODE = 27;
export const DATE_FORMAT = 'MM/dd/yyyy';
export const BYTE_UNITS = ['Bytes', 'KB', 'MB', 'GB', 'TB'] as const;
