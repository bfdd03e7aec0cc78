import { z } from 'zod';
import { ServiceSourceSchema } from './source.js';

// Response shapes (the spec's "Entities and their fields"). Every response is serialised through these, so no field
// (key material, token hashes) can leak by accident.

export const NodeStatusSchema = z.enum(['online', 'idle', 'offline']);
export type NodeStatusValue = z.infer<typeof NodeStatusSchema>;

export const NodeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  address: z.string().nullable(),
  allowInternet: z.boolean(),
  isGateway: z.boolean(),
  gatewayNetwork: z.string().nullable(),
  /**
   * Every subnet a gateway node routes; the first is `gatewayNetwork` (the spec's one field). [] otherwise; absent from
   * gateways before it existed.
   */
  gatewayNetworks: z.array(z.string()).default([]),
  /**
   * Beyond the spec: the operator lets this gateway node's access tokens replace its subnets (`postern networks set`);
   * off unless the operator turned it on. Optional so a client reads gateways from before it (absent: off); this
   * gateway always sends it.
   */
  allowTokenNetworks: z.boolean().optional(),
  /**
   * Why the last data-plane apply set (part of) this node aside, e.g. a subnet its token set that the gateway itself
   * needs; null when all of it is served. A node's token reads a fixed text. Optional like `allowTokenNetworks`.
   */
  applyError: z.string().nullable().optional(),
  isLocal: z.boolean(),
  enabled: z.boolean(),
  status: NodeStatusSchema,
  clientIp: z.string().nullable(),
  latestHandshakeTimestamp: z.string().nullable(),
  transferRx: z.number(),
  transferTx: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Node = z.infer<typeof NodeSchema>;

/** Node creation answer: the node plus its first access token, shown once. */
export const NodeCreatedSchema = NodeSchema.extend({ token: z.string() });
export type NodeCreated = z.infer<typeof NodeCreatedSchema>;

/** `uploaded` (beyond the spec): the operator's own certificate, never renewed by a CA (docs/api.md "Certificates"). */
export const SslModeSchema = z.enum(['self-signed', 'certbot', 'uploaded']);
export type SslMode = z.infer<typeof SslModeSchema>;

export const CertificateStateSchema = z.enum(['pending', 'valid', 'failed', 'self-signed']);

export const CertificateSchema = z.object({
  state: CertificateStateSchema,
  issuer: z.string().nullable(),
  notBefore: z.string().nullable(),
  notAfter: z.string().nullable(),
  fingerprint: z.string().nullable(),
  error: z.string().nullable(),
  /**
   * Beyond the spec, optional so clients read gateways from before them: how it is obtained (`self-signed`,
   * `http-01`, `dns-01`, `uploaded`), the names it covers, and when a CA was last asked (null: never).
   */
  method: z.enum(['self-signed', 'http-01', 'dns-01', 'uploaded']).optional(),
  names: z.array(z.string()).optional(),
  lastAttemptAt: z.string().nullable().optional(),
});
export type Certificate = z.infer<typeof CertificateSchema>;

export const DomainSchema = z.object({
  id: z.number().int(),
  domain: z.string(),
  ssl: SslModeSchema,
  /** The node the domain is assigned to (its token may publish on it); null: the admin's. */
  ownerNodeId: z.number().int().nullable(),
  /** Read-only: that node's name, for lists. */
  ownerNodeName: z.string().nullable(),
  certificate: CertificateSchema.nullable(),
  /**
   * Beyond the spec (docs/api.md "Certificates"), optional for clients of older gateways: the ACME challenge of a
   * certbot domain, the DNS provider answering dns-01, and the domain's certificate authority (null: the default).
   */
  challenge: z.enum(['http-01', 'dns-01']).optional(),
  dnsProviderId: z.number().int().nullable().optional(),
  acmeCaId: z.number().int().nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Domain = z.infer<typeof DomainSchema>;

/** Who decided something about a service: the console's operator or the node's access token. */
export const DecisionMakerSchema = z.enum(['admin', 'node']);
export type DecisionMaker = z.infer<typeof DecisionMakerSchema>;

const serviceCommon = {
  id: z.number().int(),
  nodeId: z.number().int(),
  name: z.string(),
  domain: z.string().nullable(),
  backendHost: z.string(),
  backendPort: z.number().int(),
  allowedIps: z.array(z.string()),
  blockedIps: z.array(z.string()),
  enabled: z.boolean(),
  publicAccess: z.string(),
  /** Why the last data-plane apply rejected this service's config; null when it is served. */
  applyError: z.string().nullable(),
  /**
   * Temporary exposure: when the gateway disables it (it stays, disabled); null: never. Beyond the spec; optional so
   * a client reads the answers of a gateway from before it existed (this gateway always sends it).
   */
  expiresAt: z.string().nullable().optional(),
  /**
   * Who made the decisions a node's token cannot undo (docs/api.md "Agent API"): who created the service, who
   * disabled it (`system`: its expiry; null while enabled) and who set its expiry (null without one). `admin` is the
   * console's operator, `node` the node's access token. Optional so a client reads gateways from before them.
   */
  createdBy: DecisionMakerSchema.optional(),
  disabledBy: z.enum(['admin', 'node', 'system']).nullable().optional(),
  expirySetBy: DecisionMakerSchema.nullable().optional(),
  /**
   * What made the service when it was not a person: the Docker labels of a container on the node (docs/LABELS.md);
   * null: the console, the API or `postern expose`. Optional so a client reads gateways from before it.
   */
  source: ServiceSourceSchema.nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
};

export const HttpServiceSchema = z.object({
  ...serviceCommon,
  pathLocation: z.string(),
  backendProto: z.enum(['http', 'https']),
  /** Read-only: the certificate mode of the domain it is served on. */
  ssl: SslModeSchema,
});
export type HttpService = z.infer<typeof HttpServiceSchema>;

export const TcpServiceSchema = z.object({
  ...serviceCommon,
  proto: z.enum(['tcp', 'udp']),
  port: z.number().int(),
  ssl: z.boolean(),
});
export type TcpService = z.infer<typeof TcpServiceSchema>;

export const ServiceTypeSchema = z.enum(['http', 'tcp']);
export type ServiceType = z.infer<typeof ServiceTypeSchema>;

/** An answer about a service of either type (the path's `:type` says which). */
export const AnyServiceSchema = z.union([HttpServiceSchema, TcpServiceSchema]);
export type AnyService = z.infer<typeof AnyServiceSchema>;

/** A match of "Find service": the service with its type and the name of the node it belongs to. */
export const FoundServiceSchema = z.object({
  type: ServiceTypeSchema,
  nodeName: z.string(),
  service: AnyServiceSchema,
});
export type FoundService = z.infer<typeof FoundServiceSchema>;

export const PersonalAccessTokenSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  expireAt: z.string().nullable(),
  revoked: z.boolean(),
  lastUsedAt: z.string().nullable(),
  created_at: z.string(),
});
export type PersonalAccessToken = z.infer<typeof PersonalAccessTokenSchema>;

/** Token creation answer: the only time the secret is shown. */
export const PersonalAccessTokenCreatedSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  expireAt: z.string().nullable(),
  token: z.string(),
});
export type PersonalAccessTokenCreated = z.infer<typeof PersonalAccessTokenCreatedSchema>;

export const LoginResponseSchema = z.object({ token: z.string(), expires_in: z.number().int() });
export type LoginResponse = z.infer<typeof LoginResponseSchema>;

/**
 * The password step's answer when the admin has two-factor sign-in on: no session yet, a short-lived challenge to
 * exchange with a code at POST /api/auth/login/2fa. With 2FA off the answer stays the spec's LoginResponse.
 */
export const SecondFactorChallengeSchema = z.object({
  twoFactorRequired: z.literal(true),
  challenge: z.string(),
  expires_in: z.number().int(),
});
export type SecondFactorChallenge = z.infer<typeof SecondFactorChallengeSchema>;

export const TwoFactorStatusSchema = z.object({ enabled: z.boolean(), recoveryCodesLeft: z.number().int() });
export type TwoFactorStatus = z.infer<typeof TwoFactorStatusSchema>;

/** Shown once, when enrolment starts: the secret, its otpauth:// URI and that URI as a QR code (an SVG data URL). */
export const TwoFactorSetupSchema = z.object({ secret: z.string(), otpauthUri: z.string(), qrCode: z.string() });
export type TwoFactorSetup = z.infer<typeof TwoFactorSetupSchema>;

/** Shown once, when enrolment is confirmed. */
export const TwoFactorEnabledSchema = z.object({ recoveryCodes: z.array(z.string()) });
export type TwoFactorEnabled = z.infer<typeof TwoFactorEnabledSchema>;

export const HealthSchema = z.object({ status: z.literal('ok'), version: z.string() });
export type Health = z.infer<typeof HealthSchema>;

/**
 * A certificate pin as `postern connect --pin` takes it: `sha256:` and the base64 SHA-256 of the certificate's
 * SubjectPublicKeyInfo (DER), the value curl's `--pinnedpubkey sha256//…` and HPKP use.
 */
export const CERTIFICATE_PIN_PATTERN = /^sha256:[A-Za-z0-9+/]{43}=$/;
export const CertificatePinSchema = z.string().regex(CERTIFICATE_PIN_PATTERN);

/** How a new node gets its software from this gateway: what the node-ready dialog's commands name. */
export const NodeInstallInfoSchema = z.object({
  /**
   * Whether the gateway serves `install.sh`, the node client and their checksums (`<publicUrl>/install.sh`,
   * `<publicUrl>/downloads/…`); false on a gateway built without scripts/build-node-client.sh.
   */
  script: z.boolean(),
  /** The published node image, `<POSTERN_RELEASE_REGISTRY>/node:<gateway version>`. */
  image: z.string(),
  /** The published node chart, `oci://<POSTERN_RELEASE_REGISTRY>/charts/postern-node`. */
  chart: z.string(),
  /** The chart's version: the gateway's. */
  chartVersion: z.string(),
});
export type NodeInstallInfo = z.infer<typeof NodeInstallInfoSchema>;

/** What the console needs to print a connect command that works from a remote node. */
export const SystemInfoSchema = z.object({
  /** `https://<POSTERN_PUBLIC_HOST>[:<POSTERN_HTTPS_PORT>]`: where nodes reach the API. */
  publicUrl: z.string(),
  /** The certificate served on that address; null when there is none yet (data plane off). */
  certificate: z.object({ selfSigned: z.boolean(), pin: CertificatePinSchema }).nullable(),
  nodeInstall: NodeInstallInfoSchema,
});
export type SystemInfo = z.infer<typeof SystemInfoSchema>;

/** The one path nodes may reach on the gateway's tunnel address: nginx answers it with 200 `ok`. */
export const TUNNEL_HEALTH_PATH = '/_postern/tunnel-health';

/**
 * One gateway a node's tunnel reaches (several gateways share one database: docs/SCALE-OUT.md). The node's wg-quick
 * config has one [Peer] per listed gateway, in this order; each peer's AllowedIPs start with the gateway's own
 * `address/32`, and the first peer also carries the wide routes (the VPN subnet, or 0.0.0.0/0 for a full tunnel). A
 * node whose first gateway stops answering moves the wide routes to the next gateway that does.
 */
export const AgentGatewaySchema = z.object({
  /** The gateway's name (POSTERN_GATEWAY_NAME), unique among the gateways of one database. */
  name: z.string(),
  publicKey: z.string(),
  /** `host:port` the node dials. */
  endpoint: z.string(),
  /** The gateway's tunnel address inside the VPN subnet, without prefix. */
  address: z.string(),
  /** `http://<address>:<POSTERN_HTTP_PORT>/_postern/tunnel-health` */
  tunnelHealthUrl: z.string(),
});
export type AgentGateway = z.infer<typeof AgentGatewaySchema>;

/** Agent API: what `postern connect` receives. */
export const AgentConfigSchema = z.object({
  node: NodeSchema,
  config: z.string(),
  /**
   * Every live gateway, in the order of the config's [Peer] sections. Optional so the CLI still reads the answer of
   * a gateway from before several gateways existed (then the config's one peer is the only gateway).
   */
  gateways: z.array(AgentGatewaySchema).optional(),
  /**
   * `http://<gateway tunnel address>:<POSTERN_HTTP_PORT>/_postern/tunnel-health`, probed by `postern status --health`.
   * Optional so the CLI still reads the answer of a gateway from before it existed.
   */
  tunnelHealthUrl: z.string().optional(),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
