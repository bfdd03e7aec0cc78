import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { isBackendHost, isIPv4, isIPv4Cidr, isIPv6, isPrintableAscii } from '@postern/contract';

// The one place that reads process.env. A bad value stops boot with a readable message (see main.ts).

const PORT_MESSAGE = 'must be a port number (1-65535)';
const portText = z.coerce
  .number({ error: PORT_MESSAGE })
  .int(PORT_MESSAGE)
  .min(1, PORT_MESSAGE)
  .max(65535, PORT_MESSAGE);

const QUOTA_MESSAGE = 'must be a whole number from 0 to 100000';
/** How many things of one kind a node's token may create; 0 forbids them. */
const quotaText = z.coerce
  .number({ error: QUOTA_MESSAGE })
  .int(QUOTA_MESSAGE)
  .min(0, QUOTA_MESSAGE)
  .max(100_000, QUOTA_MESSAGE);

/** One trusted-proxy entry: an IPv4 or IPv6 address, optionally with a prefix length. */
function isAddressOrCidr(entry: string): boolean {
  if (isIPv4(entry) || isIPv4Cidr(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || !isIPv6(address)) return false;
  return prefix === undefined || /^(12[0-8]|1[01]\d|[1-9]?\d)$/.test(prefix);
}

/** A gateway's name (POSTERN_GATEWAY_NAME): a DNS label, so a Kubernetes pod name fits. */
export const GATEWAY_NAME_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** `host:port` as a WireGuard Endpoint: a host name or IPv4 address (the node config's allow-list), a port. */
function isHostPort(value: string): boolean {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match?.[1] || !match[2]) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 && isBackendHost(match[1]);
}

const EnvSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
    POSTERN_DATA_DIR: z.string().min(1).default('./data'),
    /**
     * PostgreSQL shared by several gateways (postgres://user:password@host/db); unset or empty: the embedded SQLite
     * database under the data dir. A secret (it may hold a password): never logged, and no message repeats it.
     */
    POSTERN_DATABASE_URL: z.preprocess(
      emptyAsUnset,
      z
        .string()
        .refine(
          (v) => /^postgres(ql)?:\/\/./i.test(v) && URL.canParse(v),
          'must be a PostgreSQL URL: postgres://user:password@host:5432/database (or postgresql://)',
        )
        .optional(),
    ),
    /**
     * The secret key's file (32 random bytes, base64: the format of <data dir>/secret.key), read instead of the data
     * dir's and never written: every gateway on one database needs the same key (a Kubernetes or compose secret).
     */
    POSTERN_SECRET_KEY_FILE: z.preprocess(emptyAsUnset, z.string().optional()),
    /**
     * Where the control plane's plain-HTTP port listens. Loopback: nginx publishes the console and API over HTTPS
     * and reaches the control plane there; anything wider serves sign-in unencrypted (a warning at boot says so).
     */
    POSTERN_HOST: z.string().min(1).default('127.0.0.1'),
    POSTERN_PORT: portText.default(3000),
    /** Host name or IP nodes dial and public URLs use. */
    POSTERN_PUBLIC_HOST: z
      .string()
      .refine((v) => isPrintableAscii(v) && isBackendHost(v.toLowerCase()), 'must be a host name or IPv4 address')
      .default('localhost'),
    POSTERN_ADMIN_USERNAME: z.string().min(1).max(64).default('admin'),
    POSTERN_ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
    POSTERN_VPN_SUBNET: z
      .string()
      .refine(isIPv4Cidr, 'must be an IPv4 network in CIDR form, e.g. 10.44.0.0/16')
      .refine((v) => Number(v.split('/')[1]) <= 30, 'must leave room for nodes (prefix /30 or shorter)')
      .default('10.44.0.0/16'),
    POSTERN_TCP_PORT_RANGE: z
      .string()
      .regex(/^\d{1,5}-\d{1,5}$/, 'must look like 30000-30100')
      .default('30000-30100')
      .transform((v, ctx) => {
        const [lo, hi] = v.split('-').map(Number) as [number, number];
        if (lo < 1 || hi > 65535 || lo > hi) {
          ctx.addIssue({ code: 'custom', message: 'must be LOW-HIGH within 1-65535' });
          return z.NEVER;
        }
        return [lo, hi] as const;
      }),
    POSTERN_WG_INTERFACE: z
      .string()
      .regex(/^[A-Za-z0-9_=+.-]{1,15}$/, 'must be a valid interface name (at most 15 characters)')
      .default('postern0'),
    POSTERN_WG_PORT: portText.default(51820),
    /**
     * This gateway's name among the gateways of one database (docs/SCALE-OUT.md); unset: a name made once and kept in
     * <data>/gateway-name (modules/gateways), so a recreated container with the same volume is the same gateway.
     */
    POSTERN_GATEWAY_NAME: z.preprocess(
      emptyAsUnset,
      z
        .string()
        .regex(
          GATEWAY_NAME_RE,
          'must be 1-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit',
        )
        .optional(),
    ),
    /** `host:port` nodes dial to reach this gateway's WireGuard; unset: POSTERN_PUBLIC_HOST:POSTERN_WG_PORT. */
    POSTERN_WG_ENDPOINT: z.preprocess(
      emptyAsUnset,
      z.string().refine(isHostPort, 'must be host:port, e.g. gw2.example.com:51820 or 203.0.113.7:51820').optional(),
    ),
    POSTERN_HTTP_PORT: portText.default(80),
    POSTERN_HTTPS_PORT: portText.default(443),
    /** HTTPS port of services without a domain: another origin than the console's (same host, other port). */
    POSTERN_NO_DOMAIN_HTTPS_PORT: portText.default(8443),
    /** Per-node quotas on what a node's access token may create (the admin is not bound by them). */
    POSTERN_NODE_MAX_SERVICES: quotaText.default(50),
    POSTERN_NODE_MAX_PORTS: quotaText.default(10),
    POSTERN_NODE_MAX_DOMAINS: quotaText.default(10),
    /**
     * The widest subnet a gateway node's access token may route (`postern networks set`, where the operator allowed
     * it): its prefix length at least this. The operator's own networks are not bound by it.
     */
    POSTERN_NODE_NETWORK_MIN_PREFIX: z.coerce
      .number({ error: 'must be a prefix length from 8 to 32' })
      .int('must be a prefix length from 8 to 32')
      .min(8, 'must be a prefix length from 8 to 32')
      .max(32, 'must be a prefix length from 8 to 32')
      .default(16),
    /** `real` runs nginx and WireGuard; `off` keeps the control plane only (development without root). */
    POSTERN_DATAPLANE: z.enum(['real', 'off']).default('real'),
    /**
     * Peers whose X-Forwarded-For is believed. The default trusts the gateway's own nginx, which publishes the
     * console on loopback; an empty value trusts nobody.
     */
    POSTERN_TRUSTED_PROXIES: z
      .string()
      .default('127.0.0.1,::1')
      .transform((v, ctx) => {
        if (v.trim() === '') return [];
        const entries = v.split(',').map((entry) => entry.trim());
        const bad = entries.filter((entry) => !isAddressOrCidr(entry));
        if (bad.length > 0) {
          const shown = bad.map((entry) => (entry === '' ? '(empty entry)' : `"${entry}"`)).join(', ');
          ctx.addIssue({
            code: 'custom',
            message: `must be comma-separated IP addresses or CIDR ranges, e.g. 127.0.0.1,10.0.0.0/8,::1 (not ${shown})`,
          });
          return z.NEVER;
        }
        return entries;
      }),
    /**
     * Name servers nginx asks for backends given by DNS name (resolved per request). Default: those of
     * /etc/resolv.conf (in a container, the runtime's embedded DNS).
     */
    POSTERN_RESOLVERS: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined || v.trim() === '') return undefined;
        const entries = v.split(',').map((entry) => entry.trim());
        if (entries.some((entry) => !isIPv4(entry))) {
          ctx.addIssue({ code: 'custom', message: 'must be comma-separated IPv4 addresses, e.g. 10.0.0.53,10.0.0.54' });
          return z.NEVER;
        }
        return entries;
      }),
    POSTERN_SESSION_TTL: z.coerce.number().int().min(60).max(2_592_000).default(86_400),
    /** Days the audit log keeps an entry; older ones are pruned in small batches by a timer. */
    POSTERN_AUDIT_RETENTION_DAYS: z.coerce
      .number({ error: 'must be a number of days (1-3650)' })
      .int()
      .min(1)
      .max(3650)
      .default(90),
    /** Seconds a client may take to send a whole request (headers and body); a slow or stalled one is cut. */
    POSTERN_REQUEST_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds (1-3600)' })
      .int()
      .min(1)
      .max(3600)
      .default(30),
    /**
     * The public listeners against one abusive client (dataplane README, "The public listeners"): how many TCP
     * connections one IPv4 address may hold at once to the web ports (80, 443, the no-domain port) and, counted
     * apart, to the TCP service ports (kernel rules, from the first SYN: connections still in their TLS handshake
     * count). Generous, so clients behind one CGNAT address or a corporate proxy are not cut off; 0: no limit.
     */
    POSTERN_MAX_CONNECTIONS_PER_ADDRESS: z.coerce
      .number({ error: 'must be a whole number from 0 to 1000000 (0: no limit)' })
      .int('must be a whole number from 0 to 1000000 (0: no limit)')
      .min(0, 'must be a whole number from 0 to 1000000 (0: no limit)')
      .max(1_000_000, 'must be a whole number from 0 to 1000000 (0: no limit)')
      .default(1024),
    /** Addresses or IPv4 networks the per-address limit does not apply to (your own load balancer or proxy). */
    POSTERN_CONNECTION_LIMIT_EXEMPT: z
      .string()
      .default('')
      .transform((v, ctx) => {
        if (v.trim() === '') return [];
        const entries = v.split(',').map((entry) => entry.trim());
        const bad = entries.filter((entry) => !isIPv4(entry) && !isIPv4Cidr(entry));
        if (bad.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `must be comma-separated IPv4 addresses or networks, e.g. 10.0.0.5,192.168.10.0/24 (not ${bad.map((entry) => `"${entry}"`).join(', ')})`,
          });
          return z.NEVER;
        }
        return entries;
      }),
    /**
     * Seconds a client of the HTTP(S) ports may take for its TLS handshake, and again for a request's headers (one
     * nginx timer covers both in 1.22); nginx's own default is 60.
     */
    POSTERN_HANDSHAKE_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds (1-300)' })
      .int('must be a number of seconds (1-300)')
      .min(1, 'must be a number of seconds (1-300)')
      .max(300, 'must be a number of seconds (1-300)')
      .default(10),
    /** Connections each nginx worker of the HTTP(S) ports may hold; unset: sized to the machine's memory. */
    POSTERN_WORKER_CONNECTIONS: z.preprocess(
      emptyAsUnset,
      z.coerce
        .number({ error: 'must be a whole number from 1024 to 262144' })
        .int('must be a whole number from 1024 to 262144')
        .min(1024, 'must be a whole number from 1024 to 262144')
        .max(262_144, 'must be a whole number from 1024 to 262144')
        .optional(),
    ),
    /** Password hashes (argon2id, ~20 MiB each) run at once; more wait in the queue. Default: 2 × CPUs. */
    POSTERN_PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
    /** Sign-ins and password changes that may wait for a hashing slot; beyond it they get a 429 at once. */
    POSTERN_PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).max(10_000).default(64),
    /** Boot backups (taken before a database migration, in <data>/backups/) kept; older ones are deleted. */
    POSTERN_BACKUP_KEEP: z.coerce
      .number({ error: 'must be a whole number from 1 to 1000' })
      .int()
      .min(1)
      .max(1000)
      .default(5),
    /**
     * Prometheus `/metrics` (docs/api.md "Observability"): a read-only bearer token for it, and/or an address
     * `host:port` where a listener of its own serves it (on a private network, say). Without either, /metrics is not
     * served.
     */
    // Empty means unset, so compose files can pass `${POSTERN_METRICS_TOKEN:-}` through.
    POSTERN_METRICS_TOKEN: z.preprocess(
      emptyAsUnset,
      z
        .string()
        .min(16, 'must be at least 16 characters')
        .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
        .optional(),
    ),
    POSTERN_METRICS_ADDRESS: z.preprocess(
      emptyAsUnset,
      z
        .string()
        .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 10.0.0.5:9464 or [::1]:9464')
        .optional(),
    ),
    /**
     * Seconds between two drift checks of what nginx and WireGuard serve (one also runs a few seconds after every
     * change).
     */
    POSTERN_DRIFT_CHECK_INTERVAL: z.coerce
      .number({ error: 'must be a number of seconds (1-3600)' })
      .int()
      .min(1)
      .max(3600)
      .default(60),
    /**
     * Seconds a run-once job's lease lasts (ACME, expiry sweep, audit retention, health audit rows; renewed every
     * third of it): how long the jobs wait for another gateway after their holder died. Several gateways only.
     */
    POSTERN_LEASE_SECONDS: z.coerce
      .number({ error: 'must be a number of seconds (1-600)' })
      .int()
      .min(1)
      .max(600)
      .default(30),
    /**
     * Notifications (docs/api.md "Notifications"): the first retry of a message a channel did not take, in seconds
     * (each further retry waits twice as long, up to POSTERN_NOTIFICATION_RETRY_MAX_SECONDS); a message is given up
     * after 24 hours.
     */
    POSTERN_NOTIFICATION_RETRY_SECONDS: z.coerce
      .number({ error: 'must be a number of seconds (0.1-3600)' })
      .min(0.1, 'must be a number of seconds (0.1-3600)')
      .max(3600, 'must be a number of seconds (0.1-3600)')
      .default(10),
    POSTERN_NOTIFICATION_RETRY_MAX_SECONDS: z.coerce
      .number({ error: 'must be a number of seconds (0.1-86400)' })
      .min(0.1, 'must be a number of seconds (0.1-86400)')
      .max(86_400, 'must be a number of seconds (0.1-86400)')
      .default(900),
    POSTERN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    POSTERN_CONSOLE_DIR: z.string().optional(),
    /** The built node client (scripts/build-node-client.sh) served to nodes; unset: apps/cli/dist/release. */
    POSTERN_NODE_CLIENT_DIR: z.string().optional(),
    /**
     * Where the node image and chart the console's Docker and Helm commands name are published:
     * `<registry>/node:<version>`, `oci://<registry>/charts/postern-node`. A fork points it at its own.
     */
    POSTERN_RELEASE_REGISTRY: z.preprocess(
      emptyAsUnset,
      z
        .string()
        .regex(
          /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/,
          'must be a registry and path in lower case, e.g. ghcr.io/postern or registry.example.com:5000/team',
        )
        .default('ghcr.io/postern'),
    ),
    POSTERN_ACME_DIRECTORY: z.url().default('https://acme-v02.api.letsencrypt.org/directory'),
    POSTERN_ACME_EMAIL: z.email().optional(),
    /** PEM file of an extra CA to trust for the ACME directory (tests use pebble's). */
    POSTERN_ACME_CA_FILE: z.string().optional(),
    /** Skip acme-client's own challenge pre-check (hosts that cannot resolve their own domains; tests). */
    POSTERN_ACME_SKIP_PRECHECK: z.enum(['true', 'false']).default('false'),
  })
  .superRefine((env, ctx) => {
    const [lo, hi] = env.POSTERN_TCP_PORT_RANGE;
    const ports = ['POSTERN_HTTP_PORT', 'POSTERN_HTTPS_PORT', 'POSTERN_NO_DOMAIN_HTTPS_PORT', 'POSTERN_PORT'] as const;
    for (const key of ports) {
      if (env[key] >= lo && env[key] <= hi) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must lie outside POSTERN_TCP_PORT_RANGE' });
      }
      const clash = ports.find((other) => other !== key && env[other] === env[key]);
      if (clash && ports.indexOf(clash) < ports.indexOf(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `must differ from ${clash}` });
      }
    }
  });

/** What the rest of the server reads: the environment, validated and named for use. */
const ConfigSchema = EnvSchema.transform((env) => ({
  isProduction: env.NODE_ENV === 'production',
  dataDir: env.POSTERN_DATA_DIR,
  /** PostgreSQL's connection URL (a secret); undefined: embedded SQLite at <dataDir>/postern.db. */
  databaseUrl: env.POSTERN_DATABASE_URL,
  /** The secret key's file; undefined: <dataDir>/secret.key, created on first boot. */
  secretKeyFile: env.POSTERN_SECRET_KEY_FILE,
  host: env.POSTERN_HOST,
  port: env.POSTERN_PORT,
  publicHost: env.POSTERN_PUBLIC_HOST,
  adminUsername: env.POSTERN_ADMIN_USERNAME,
  adminPassword: env.POSTERN_ADMIN_PASSWORD,
  vpnSubnet: env.POSTERN_VPN_SUBNET,
  tcpPortRange: env.POSTERN_TCP_PORT_RANGE,
  wgInterface: env.POSTERN_WG_INTERFACE,
  wgPort: env.POSTERN_WG_PORT,
  /** This gateway's name; undefined: the one kept in <dataDir>/gateway-name (made at first boot). */
  gatewayName: env.POSTERN_GATEWAY_NAME,
  /** Where nodes dial this gateway's WireGuard. */
  wgEndpoint: env.POSTERN_WG_ENDPOINT ?? `${env.POSTERN_PUBLIC_HOST}:${env.POSTERN_WG_PORT}`,
  httpPort: env.POSTERN_HTTP_PORT,
  httpsPort: env.POSTERN_HTTPS_PORT,
  /** Where services without a domain are published: https://<publicHost>:<noDomainHttpsPort>/<path>. */
  noDomainHttpsPort: env.POSTERN_NO_DOMAIN_HTTPS_PORT,
  /** Limits on what one node's access token may create. */
  nodeQuotas: {
    services: env.POSTERN_NODE_MAX_SERVICES,
    ports: env.POSTERN_NODE_MAX_PORTS,
    domains: env.POSTERN_NODE_MAX_DOMAINS,
  },
  /** The shortest prefix of a subnet a gateway node's token may route (POSTERN_NODE_NETWORK_MIN_PREFIX). */
  nodeNetworkMinPrefix: env.POSTERN_NODE_NETWORK_MIN_PREFIX,
  dataPlane: env.POSTERN_DATAPLANE,
  /** Addresses/CIDRs allowed to set the client address via X-Forwarded-For; empty: nobody. */
  trustedProxies: env.POSTERN_TRUSTED_PROXIES,
  /** Name servers for backends given by DNS name; undefined: /etc/resolv.conf's. */
  resolvers: env.POSTERN_RESOLVERS as readonly string[] | undefined,
  sessionTtlSeconds: env.POSTERN_SESSION_TTL,
  auditRetentionDays: env.POSTERN_AUDIT_RETENTION_DAYS,
  /** The public listeners' defences against one abusive client (the data plane's README). */
  listener: {
    maxConnectionsPerAddress: env.POSTERN_MAX_CONNECTIONS_PER_ADDRESS,
    exempt: env.POSTERN_CONNECTION_LIMIT_EXEMPT,
    handshakeTimeoutSeconds: env.POSTERN_HANDSHAKE_TIMEOUT,
    /** undefined: sized to the machine (dataplane/nginx/sizing.ts). */
    workerConnections: env.POSTERN_WORKER_CONNECTIONS,
  },
  requestTimeoutMs: env.POSTERN_REQUEST_TIMEOUT * 1000,
  passwordHashConcurrency: env.POSTERN_PASSWORD_HASH_CONCURRENCY ?? 2 * availableParallelism(),
  passwordHashQueue: env.POSTERN_PASSWORD_HASH_QUEUE,
  backupKeep: env.POSTERN_BACKUP_KEEP,
  logLevel: env.POSTERN_LOG_LEVEL,
  metricsToken: env.POSTERN_METRICS_TOKEN,
  driftCheckIntervalMs: env.POSTERN_DRIFT_CHECK_INTERVAL * 1000,
  leaseMs: env.POSTERN_LEASE_SECONDS * 1000,
  /** Back-off of a notification's retries: the first delay, doubling up to the maximum. */
  notificationRetryMs: {
    first: Math.round(env.POSTERN_NOTIFICATION_RETRY_SECONDS * 1000),
    max: Math.round(
      Math.max(env.POSTERN_NOTIFICATION_RETRY_MAX_SECONDS, env.POSTERN_NOTIFICATION_RETRY_SECONDS) * 1000,
    ),
  },
  metricsAddress: env.POSTERN_METRICS_ADDRESS,
  consoleDir: env.POSTERN_CONSOLE_DIR,
  nodeClientDir: env.POSTERN_NODE_CLIENT_DIR,
  releaseRegistry: env.POSTERN_RELEASE_REGISTRY,
  acmeDirectory: env.POSTERN_ACME_DIRECTORY,
  acmeEmail: env.POSTERN_ACME_EMAIL,
  acmeCaFile: env.POSTERN_ACME_CA_FILE,
  acmeSkipPrecheck: env.POSTERN_ACME_SKIP_PRECHECK === 'true',
}));

/** The server's configuration: the type follows from the schema, so a setting is declared in one place. */
export type Config = z.output<typeof ConfigSchema>;

function emptyAsUnset(value: unknown): unknown {
  return value === '' ? undefined : value;
}

export function parseConfig(source: Record<string, string | undefined>): Config {
  const result = ConfigSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export const loadConfig = (): Config => parseConfig(process.env);
