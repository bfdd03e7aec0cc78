import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// Timestamps are ISO 8601 strings (UTC). Secrets are never stored in the clear: passwords and tokens as hashes,
// WireGuard private keys encrypted (AES-256-GCM, key under the data dir; see secrets.ts).

// Filled in by drizzle when an insert leaves them out, not by an SQL default: the same query code runs on PostgreSQL
// (db/postgres.ts), where SQLite's strftime does not exist. Raw SQL inserts must give them.
const now = (): string => new Date().toISOString();
const timestamps = {
  createdAt: text('created_at').notNull().$defaultFn(now),
  updatedAt: text('updated_at').notNull().$defaultFn(now),
};

export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    username: text('username').notNull().unique(),
    passwordHash: text('password_hash').notNull(),
    /** TOTP secret (base32), encrypted with the secret key; set once two-factor sign-in is confirmed. */
    totpSecretEnc: text('totp_secret_enc'),
    /** An enrolment started but not confirmed yet (encrypted too); replaced by the next start. */
    totpPendingSecretEnc: text('totp_pending_secret_enc'),
    /** The last TOTP time step accepted: a code of that step or an earlier one is refused (replay). */
    totpLastStep: integer('totp_last_step'),
    /**
     * What the account may do (contract roles.ts). The default is the least privileged role; the migration that
     * added the column made the accounts of before (the one admin) owners.
     */
    role: text('role', { enum: ['owner', 'admin', 'operator', 'viewer'] })
      .notNull()
      .default('viewer'),
    /** A disabled account cannot sign in; disabling it ends its sessions. */
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    /** Off: the account signs in only through its bound identity (needs one). */
    passwordSignIn: integer('password_sign_in', { mode: 'boolean' }).notNull().default(true),
    /**
     * The provider identity bound to the account: the provider's row, and its issuer and subject as they were when
     * bound (an issuer changed since matches no more: a provider's edit cannot take over its accounts).
     */
    identityProviderId: integer('identity_provider_id').references(() => identityProviders.id, {
      onDelete: 'set null',
    }),
    identityIssuer: text('identity_issuer'),
    identitySubject: text('identity_subject'),
    /** The email the provider said at the last sign-in: shown, never matched. */
    identityEmail: text('identity_email'),
    lastSignInAt: text('last_sign_in_at'),
    /**
     * The nodes (ids) an operator or viewer may see (docs/api.md "Node scope"); null: every node. A node deleted
     * later simply matches nothing.
     */
    nodeScope: text('node_scope', { mode: 'json' }).$type<number[]>(),
    ...timestamps,
  },
  (t) => [uniqueIndex('users_identity_idx').on(t.identityIssuer, t.identitySubject)],
);

/**
 * Invites to the console (docs/api.md "Accounts and roles"): a one-time link whose token is stored as its SHA-256 hash;
 * taking it makes the account (`used_at` set in the same write, so a link works once), and it is refused after
 * `expires_at`.
 */
export const accountInvites = sqliteTable(
  'account_invites',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tokenHash: text('token_hash').notNull().unique(),
    username: text('username').notNull(),
    role: text('role', { enum: ['owner', 'admin', 'operator', 'viewer'] }).notNull(),
    createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    ...timestamps,
  },
  (t) => [index('account_invites_expiry_idx').on(t.expiresAt)],
);

/** One-time recovery codes for two-factor sign-in: HMAC-SHA-256 of 80 random bits; `usedAt` set when spent. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: text('used_at'),
    ...timestamps,
  },
  (t) => [index('recovery_codes_user_idx').on(t.userId)],
);

/** Console sessions: the bearer token carries the session id; deleting the row ends the session at once. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: text('expires_at').notNull(),
    /** How the session signed in ('password', 'password + authentication code', 'single sign-on (Corp IdP)', …). */
    via: text('via').notNull().default('password'),
    ...timestamps,
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** Gateway-wide settings and key material (one row per key). */
/**
 * Sign-in attempts the limiter counts (modules/auth/rate-limit.ts), in the database so that every gateway on it
 * counts the same ones. A row is a claimed attempt: a failure until it succeeds. Rows older than the window are pruned.
 */
export const signInAttempts = sqliteTable(
  'sign_in_attempts',
  {
    /** Random, made by the limiter (no sequence: nothing to fill on PostgreSQL). */
    id: text('id').primaryKey(),
    /** The client: an IPv4 address or an IPv6 /64; null once that client signed in (no longer counted against it). */
    clientKey: text('client_key'),
    /** The username tried, lowercased. */
    username: text('username').notNull(),
    /** When the attempt was claimed, ms since the epoch (a number compares the same on both engines). */
    atMs: integer('at_ms').notNull(),
  },
  (t) => [
    index('sign_in_attempts_client_idx').on(t.clientKey, t.atMs),
    index('sign_in_attempts_username_idx').on(t.username, t.atMs),
    index('sign_in_attempts_at_idx').on(t.atMs),
  ],
);

/**
 * The password step's challenges while two-factor sign-in is on (modules/auth/challenges.ts), in the database so
 * that the second step may reach any gateway and a password or second-factor change voids them everywhere (it
 * deletes the user's rows in its own write). The id is the SHA-256 of the challenge: the table alone continues no
 * sign-in.
 */
export const signInChallenges = sqliteTable(
  'sign_in_challenges',
  {
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** ms since the epoch (a number compares the same on both engines). */
    expiresAtMs: integer('expires_at_ms').notNull(),
    /** Wrong codes given with this challenge; at CHALLENGE_MAX_FAILURES it is void. */
    failures: integer('failures').notNull().default(0),
    /** How the first step was passed ('password', or 'single sign-on (<provider>)'): the session's `via` begins so. */
    via: text('via').notNull().default('password'),
  },
  (t) => [index('sign_in_challenges_user_idx').on(t.userId), index('sign_in_challenges_expiry_idx').on(t.expiresAtMs)],
);

/**
 * TOTP code checks per account (modules/auth/second-factor-limit.ts): a row is claimed before a code is evaluated and
 * withdrawn when it was right, so the rows in the window are the account's wrong codes, whichever gateway and
 * address they came from. Rows older than the window are pruned.
 */
export const secondFactorFailures = sqliteTable(
  'second_factor_failures',
  {
    /** Random, made by the limiter. */
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    atMs: integer('at_ms').notNull(),
  },
  (t) => [
    index('second_factor_failures_user_idx').on(t.userId, t.atMs),
    index('second_factor_failures_at_idx').on(t.atMs),
  ],
);

export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

export const nodes = sqliteTable(
  'nodes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    address: text('address').notNull(),
    allowInternet: integer('allow_internet', { mode: 'boolean' }).notNull().default(false),
    isGateway: integer('is_gateway', { mode: 'boolean' }).notNull().default(false),
    /** The first subnet of a gateway node (the spec's `gatewayNetwork`). */
    gatewayNetwork: text('gateway_network'),
    /**
     * Its further subnets, a JSON array: a handful at most, always read and written with the row (the desired
     * state's peer query reads them without a join) and never searched by element (overlap is checked in code).
     */
    extraGatewayNetworks: text('extra_gateway_networks', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** The operator lets this gateway node's access tokens replace its subnets (`postern networks set`). */
    allowTokenNetworks: integer('allow_token_networks', { mode: 'boolean' }).notNull().default(false),
    /**
     * Who set the subnets last: the operator in the console, or the node's token. A token's subnets are checked
     * again on every apply against what the gateway reaches, and set aside when it needs them.
     */
    networksSetBy: text('networks_set_by', { enum: ['admin', 'node'] })
      .notNull()
      .default('admin'),
    /** Why the last data-plane apply set (part of) this node aside; null when all of it is served. */
    applyError: text('apply_error'),
    isLocal: integer('is_local', { mode: 'boolean' }).notNull().default(false),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    publicKey: text('public_key').notNull(),
    /** AES-256-GCM ciphertext of the node's private key. */
    privateKeyEnc: text('private_key_enc').notNull(),
    presharedKeyEnc: text('preshared_key_enc'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('nodes_address_uq').on(t.address),
    index('nodes_gateway_idx').on(t.isGateway, t.id),
    // Status changes arrive keyed by public key; the node streams map them back to rows.
    uniqueIndex('nodes_public_key_uq').on(t.publicKey),
  ],
);

export const personalAccessTokens = sqliteTable(
  'personal_access_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    nodeId: integer('node_id')
      .notNull()
      .references(() => nodes.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** SHA-256 of the token (tokens are 200+ random bits, so a fast hash is enough). */
    tokenHash: text('token_hash').notNull().unique(),
    expireAt: text('expire_at'),
    revoked: integer('revoked', { mode: 'boolean' }).notNull().default(false),
    lastUsedAt: text('last_used_at'),
    ...timestamps,
  },
  (t) => [index('pats_node_idx').on(t.nodeId, t.id)],
);

export const domains = sqliteTable(
  'domains',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    domain: text('domain').notNull().unique(),
    /** `uploaded`: the operator's own certificate (stored in `certificate_pems`), never renewed by a CA. */
    ssl: text('ssl', { enum: ['self-signed', 'certbot', 'uploaded'] })
      .notNull()
      .default('self-signed'),
    /** How a certbot domain proves itself to the CA; a wildcard domain (`*.example.com`) takes dns-01 only. */
    challenge: text('challenge', { enum: ['http-01', 'dns-01'] })
      .notNull()
      .default('http-01'),
    /** The DNS provider writing dns-01 records; deleting a provider in use is refused. */
    dnsProviderId: integer('dns_provider_id').references(() => dnsProviders.id, { onDelete: 'set null' }),
    /** The domain's ACME CA; null: the default one (`acme_cas.is_default`, else POSTERN_ACME_DIRECTORY). */
    acmeCaId: integer('acme_ca_id').references(() => acmeCas.id, { onDelete: 'set null' }),
    /**
     * The node whose token may publish on this domain; null: the admin's (only the console's calls may). A deleted
     * node's domains fall back to the admin, with their certificates, rather than vanish.
     */
    ownerNodeId: integer('owner_node_id').references(() => nodes.id, { onDelete: 'set null' }),
    ...timestamps,
  },
  (t) => [index('domains_owner_idx').on(t.ownerNodeId)],
);

/**
 * DNS providers answering DNS-01 challenges (docs/api.md "Certificates"). `settings` holds the kind's public fields
 * (server, key name, zone, access key id, …; contract `DnsProviderSchema`), `secret_enc` its one secret (TSIG key, API
 * token, AWS secret access key, acme-dns password) encrypted with the secret key: never returned, never logged.
 */
export const dnsProviders = sqliteTable('dns_providers', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  kind: text('kind', { enum: ['rfc2136', 'cloudflare', 'route53', 'acme-dns'] }).notNull(),
  settings: text('settings', { mode: 'json' })
    .$type<Record<string, string | number | null>>()
    .notNull()
    .default(sql`'{}'`),
  secretEnc: text('secret_enc').notNull(),
  propagationTimeoutSeconds: integer('propagation_timeout_seconds').notNull().default(120),
  ...timestamps,
});

/** ACME certificate authorities the operator configured; at most one is the default (`is_default`). */
export const acmeCas = sqliteTable('acme_cas', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  directoryUrl: text('directory_url').notNull(),
  email: text('email'),
  /** External account binding: the key id, and the HMAC key encrypted with the secret key. */
  eabKeyId: text('eab_key_id'),
  eabHmacEnc: text('eab_hmac_enc'),
  isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
  ...timestamps,
});

/**
 * One ACME account per CA directory, shared by every gateway on the database: the account key encrypted with the
 * secret key (the first gateway to need it stores it; the others use that one).
 */
export const acmeAccounts = sqliteTable('acme_accounts', {
  directoryUrl: text('directory_url').primaryKey(),
  keyEnc: text('key_enc').notNull(),
  createdAt: text('created_at').notNull().$defaultFn(now),
});

/** Columns every service has, whatever its kind: who owns it, and who may reach it. */
const serviceOwner = {
  id: integer('id').primaryKey({ autoIncrement: true }),
  nodeId: integer('node_id')
    .notNull()
    .references(() => nodes.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  /**
   * What made the service when no person did: the Docker labels of a container on its node (contract
   * ServiceSourceSchema, docs/LABELS.md), as the node's token sent them; null: the console, the API or the CLI.
   */
  source: text('source', { mode: 'json' }).$type<{
    kind: 'docker-labels';
    container: string;
    key: string;
    digest: string;
  }>(),
};

const serviceAccess = {
  allowedIps: text('allowed_ips', { mode: 'json' })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  blockedIps: text('blocked_ips', { mode: 'json' })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  /** Why the last data-plane apply rejected this service; null when it is served. */
  applyError: text('apply_error'),
  /** Temporary exposure: when the expiry sweep disables the service (kept, not deleted); null: never. */
  expiresAt: text('expires_at'),
  /**
   * Who made the decisions a node's token must not undo (modules/services/decisions.ts): who created the service,
   * who disabled it (`system`: its expiry; null while enabled) and who set its expiry (null: none). Rows from before
   * these columns count as the operator's: a null where a decision exists is the operator's.
   */
  createdBy: text('created_by', { enum: ['admin', 'node'] })
    .notNull()
    .default('admin'),
  disabledBy: text('disabled_by', { enum: ['admin', 'node', 'system'] }),
  expirySetBy: text('expiry_set_by', { enum: ['admin', 'node'] }),
  /** Backend health check (docs/api.md "Observability"): seconds between checks and per check; null = the defaults. */
  healthIntervalSeconds: integer('health_interval_seconds'),
  healthTimeoutSeconds: integer('health_timeout_seconds'),
  ...timestamps,
};

export const httpServices = sqliteTable(
  'http_services',
  {
    ...serviceOwner,
    /** '' = the gateway's default host (kept non-null so the unique index covers it). */
    domain: text('domain').notNull().default(''),
    pathLocation: text('path_location').notNull().default('/'),
    backendProto: text('backend_proto', { enum: ['http', 'https'] })
      .notNull()
      .default('http'),
    backendHost: text('backend_host').notNull(),
    backendPort: integer('backend_port').notNull().default(80),
    ...serviceAccess,
  },
  (t) => [
    uniqueIndex('http_services_route_uq').on(t.domain, t.pathLocation),
    index('http_services_node_idx').on(t.nodeId, t.id),
    index('http_services_domain_idx').on(t.domain, t.id),
    index('http_services_expiry_idx').on(t.expiresAt),
    // The services overview's default order (by name, case-insensitively): a page is a walk of this index, merged
    // with tcp_services' twin (modules/services/overview.ts).
    index('http_services_name_idx').on(sql`lower(${t.name})`, t.id),
  ],
);

export const tcpServices = sqliteTable(
  'tcp_services',
  {
    ...serviceOwner,
    domain: text('domain'),
    proto: text('proto', { enum: ['tcp', 'udp'] })
      .notNull()
      .default('tcp'),
    port: integer('port').notNull(),
    ssl: integer('ssl', { mode: 'boolean' }).notNull().default(false),
    backendHost: text('backend_host').notNull(),
    backendPort: integer('backend_port').notNull(),
    ...serviceAccess,
  },
  (t) => [
    uniqueIndex('tcp_services_port_uq').on(t.proto, t.port),
    index('tcp_services_node_idx').on(t.nodeId, t.id),
    index('tcp_services_domain_idx').on(t.domain, t.id),
    index('tcp_services_expiry_idx').on(t.expiresAt),
    index('tcp_services_name_idx').on(sql`lower(${t.name})`, t.id),
  ],
);

/** Certificate state per domain, written by the certificate manager (dataplane/certs/manager.ts). */
export const certificates = sqliteTable('certificates', {
  domainId: integer('domain_id')
    .primaryKey()
    .references(() => domains.id, { onDelete: 'cascade' }),
  state: text('state', { enum: ['pending', 'valid', 'failed', 'self-signed'] }).notNull(),
  issuer: text('issuer'),
  notBefore: text('not_before'),
  notAfter: text('not_after'),
  fingerprint: text('fingerprint'),
  error: text('error'),
  nextAttemptAt: text('next_attempt_at'),
  failures: integer('failures').notNull().default(0),
  /** When a CA was last asked for this domain (null: never). */
  lastAttemptAt: text('last_attempt_at'),
  /** The DNS names the certificate in use covers. */
  names: text('names', { mode: 'json' }).$type<string[]>(),
  ...timestamps,
});

/**
 * The certificate nginx serves for a domain, shared by every gateway on the database (docs/SCALE-OUT.md): the PEM chain
 * as it is public, the private key encrypted with the secret key. One per domain, whoever made it (a CA or openssl), so
 * every gateway serves the same certificate and a pinned self-signed one stays the same across gateways.
 */
export const certificatePems = sqliteTable('certificate_pems', {
  domainId: integer('domain_id')
    .primaryKey()
    .references(() => domains.id, { onDelete: 'cascade' }),
  /** SHA-256 of the chain's first certificate (X509Certificate.fingerprint256): what a gateway compares. */
  fingerprint: text('fingerprint').notNull(),
  chain: text('chain').notNull(),
  keyEnc: text('key_enc').notNull(),
  ...timestamps,
});

/** HTTP-01 answers while an order (or a domain check) is pending: every gateway's nginx serves them. */
export const acmeChallenges = sqliteTable('acme_challenges', {
  token: text('token').primaryKey(),
  keyAuthorization: text('key_authorization').notNull(),
  createdAt: text('created_at').notNull().$defaultFn(now),
});

/**
 * Run-once jobs (ACME, expiry sweep, audit retention, health audit rows): a job runs on the gateway holding its lease
 * (cluster/leases.ts). `expiresAt` is milliseconds since the epoch on the holder's clock.
 */
export const leases = sqliteTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

/**
 * The audit log: append-only. Rows are inserted by modules/audit and deleted only by the retention sweep; no API
 * edits or deletes one. `before`/`after` hold entity snapshots scrubbed of secrets (never keys, tokens or hashes).
 */
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    at: text('at').notNull(),
    /** 'admin' (a console session), 'node' (a node's access token), 'system' (the gateway itself), 'anonymous'. */
    actorKind: text('actor_kind', { enum: ['admin', 'node', 'system', 'anonymous'] }).notNull(),
    /** The admin's username, the token's name, or the attempted username of a failed sign-in. */
    actorName: text('actor_name'),
    /** The node token's id (never its secret). */
    actorTokenId: integer('actor_token_id'),
    /** A console account's id (the person: kept when the account is renamed or deleted). */
    actorAccountId: integer('actor_account_id'),
    /** How that account's session signed in. */
    actorVia: text('actor_via'),
    address: text('address'),
    action: text('action').notNull(),
    targetType: text('target_type'),
    targetId: integer('target_id'),
    targetName: text('target_name'),
    /** The node the entry concerns (the target's node, or the acting token's node). */
    nodeId: integer('node_id'),
    /** The domain the entry concerns, if any. */
    domain: text('domain'),
    before: text('before', { mode: 'json' }).$type<Record<string, unknown>>(),
    after: text('after', { mode: 'json' }).$type<Record<string, unknown>>(),
    detail: text('detail'),
  },
  (t) => [
    index('audit_at_idx').on(t.at),
    index('audit_node_idx').on(t.nodeId, t.id),
    index('audit_domain_idx').on(t.domain, t.id),
    index('audit_action_idx').on(t.action, t.id),
    index('audit_account_idx').on(t.actorAccountId, t.id),
  ],
);

/**
 * Traffic per service and minute (docs/api.md "Observability"), kept 24 h: one row per service that had traffic in that
 * minute (an idle service costs nothing). Columns are what nginx counts; SQLite stores a zero in no bytes, so rows stay
 * small.
 */
export const trafficMinutes = sqliteTable(
  'traffic_minutes',
  {
    serviceType: text('service_type', { enum: ['http', 'tcp'] }).notNull(),
    serviceId: integer('service_id').notNull(),
    /** Unix minute (seconds / 60) the row covers. */
    minute: integer('minute').notNull(),
    /** HTTP: requests by status class. */
    s1: integer('s1').notNull().default(0),
    s2: integer('s2').notNull().default(0),
    s3: integer('s3').notNull().default(0),
    s4: integer('s4').notNull().default(0),
    s5: integer('s5').notNull().default(0),
    bytesIn: integer('bytes_in').notNull().default(0),
    bytesOut: integer('bytes_out').notNull().default(0),
    /** HTTP: requests per latency bucket (LATENCY_BUCKETS_MS, then slower), as a JSON array; null: none. */
    latency: text('latency'),
    /** TCP/UDP: connections that ended, failed ones, and their summed duration. */
    sessions: integer('sessions').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    secondsSum: integer('seconds_sum').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.serviceType, t.serviceId, t.minute] }),
    index('traffic_minutes_minute_idx').on(t.minute),
  ],
);

/**
 * The gateway processes sharing this database (docs/SCALE-OUT.md), one row each, registered at boot by name
 * (POSTERN_GATEWAY_NAME) and kept alive by a heartbeat. Each has its own WireGuard key and tunnel address; a node's
 * config has one [Peer] per live gateway (modules/gateways).
 */
export const gateways = sqliteTable('gateways', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  publicKey: text('public_key').notNull().unique(),
  /** AES-256-GCM ciphertext of the gateway's WireGuard private key. */
  privateKeyEnc: text('private_key_enc').notNull(),
  /** Tunnel address inside POSTERN_VPN_SUBNET, without prefix. */
  address: text('address').notNull().unique(),
  /** `host:port` nodes dial (POSTERN_WG_ENDPOINT). */
  endpoint: text('endpoint').notNull(),
  /** The last heartbeat (ISO); a gateway is live while it is within 60 s of the newest one. */
  lastSeenAt: text('last_seen_at').notNull(),
  ...timestamps,
});

/**
 * What each gateway's WireGuard sees of each node's peer, written behind by that gateway (only changed rows, a few
 * times a minute) so any gateway reports a node's status combined over every gateway.
 */
export const gatewayPeers = sqliteTable(
  'gateway_peers',
  {
    gatewayId: integer('gateway_id')
      .notNull()
      .references(() => gateways.id, { onDelete: 'cascade' }),
    /** The node's public key (what `wg show` reports). */
    publicKey: text('public_key').notNull(),
    /** Unix seconds of the latest handshake; 0: never. */
    latestHandshake: integer('latest_handshake').notNull().default(0),
    /** The node's internet address as this gateway saw it (host only); null: unknown. */
    clientIp: text('client_ip'),
    transferRx: integer('transfer_rx').notNull().default(0),
    transferTx: integer('transfer_tx').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.gatewayId, t.publicKey] }), index('gateway_peers_key_idx').on(t.publicKey)],
);

// ---- Who may reach a published service (docs/ACCESS.md) ---------------------------------------------------

/** OpenID Connect providers visitors sign in with; the client secret is encrypted with the secret key. */
export const identityProviders = sqliteTable('identity_providers', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  /** The issuer URL discovery starts from (`<issuer>/.well-known/openid-configuration`). */
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  /** AES-256-GCM ciphertext of the client secret; null: a public client (PKCE alone). */
  clientSecretEnc: text('client_secret_enc'),
  scopes: text('scopes', { mode: 'json' })
    .$type<string[]>()
    .notNull()
    .default(sql`'["openid","email","profile"]'`),
  /** The claim holding the user's groups (ID token, else userinfo). */
  groupsClaim: text('groups_claim').notNull().default('groups'),
  /** Whether it signs accounts in to the console (docs/api.md "Accounts and roles"); changed by owners only. */
  consoleSignIn: integer('console_sign_in', { mode: 'boolean' }).notNull().default(false),
  /** `[{ group, role }]`: the role a first sign-in of a member of `group` makes an account with (never owner). */
  consoleGroupRoles: text('console_group_roles', { mode: 'json' })
    .$type<{ group: string; role: 'admin' | 'operator' | 'viewer' }[]>()
    .notNull()
    .default(sql`'[]'`),
  ...timestamps,
});

/**
 * An access policy of a domain (every HTTP service on it) or of one HTTP service (overriding its domain's); exactly
 * one of the two ids is set. No row: public (a service: inherits its domain's). `epoch` is part of every visitor
 * cookie made under the policy: bumping it ends them all at once.
 */
export const accessPolicies = sqliteTable(
  'access_policies',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    domainId: integer('domain_id').references(() => domains.id, { onDelete: 'cascade' }),
    httpServiceId: integer('http_service_id').references(() => httpServices.id, { onDelete: 'cascade' }),
    mode: text('mode', { enum: ['public', 'protected'] })
      .notNull()
      .default('public'),
    /** Single sign-on with this provider; null: none. A provider in use cannot be deleted (checked in code). */
    providerId: integer('provider_id').references(() => identityProviders.id),
    allowEmails: text('allow_emails', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    allowEmailDomains: text('allow_email_domains', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    allowGroups: text('allow_groups', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    /** argon2id hash of the password or PIN; null: none. */
    passwordHash: text('password_hash'),
    shareLinks: integer('share_links', { mode: 'boolean' }).notNull().default(false),
    bypassPaths: text('bypass_paths', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    bypassNetworks: text('bypass_networks', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    sessionSeconds: integer('session_seconds').notNull().default(86400),
    epoch: integer('epoch').notNull().default(1),
    /** Who set a service's policy: a node's token may not change one the operator set. */
    setBy: text('set_by', { enum: ['admin', 'node'] })
      .notNull()
      .default('admin'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('access_policies_domain_uq').on(t.domainId),
    uniqueIndex('access_policies_service_uq').on(t.httpServiceId),
    index('access_policies_provider_idx').on(t.providerId),
  ],
);

/** Share links of an HTTP service: only a SHA-256 hash of the token is kept (the URL is shown once). */
export const accessShareLinks = sqliteTable(
  'access_share_links',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    httpServiceId: integer('http_service_id')
      .notNull()
      .references(() => httpServices.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    /** The link lets in below this path only; null: the service's whole path. */
    pathPrefix: text('path_prefix'),
    expiresAt: text('expires_at'),
    revokedAt: text('revoked_at'),
    createdBy: text('created_by', { enum: ['admin', 'node'] })
      .notNull()
      .default('admin'),
    lastUsedAt: text('last_used_at'),
    uses: integer('uses').notNull().default(0),
    ...timestamps,
  },
  (t) => [index('access_share_links_service_idx').on(t.httpServiceId, t.id)],
);

/**
 * Visitor sessions. nginx verifies a visitor's cookie by its MAC alone; these rows are what the console lists and what
 * revocation marks (revoked ids not yet expired are pushed to every gateway's nginx).
 */
export const accessSessions = sqliteTable(
  'access_sessions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The session id inside the cookie (128 random bits, base64url). */
    sid: text('sid').notNull().unique(),
    policyId: integer('policy_id')
      .notNull()
      .references(() => accessPolicies.id, { onDelete: 'cascade' }),
    /** The service the visitor signed in through. */
    httpServiceId: integer('http_service_id').references(() => httpServices.id, { onDelete: 'set null' }),
    host: text('host').notNull(),
    method: text('method', { enum: ['sso', 'password', 'share'] }).notNull(),
    shareLinkId: integer('share_link_id').references(() => accessShareLinks.id, { onDelete: 'cascade' }),
    subject: text('subject'),
    email: text('email'),
    groups: text('groups', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    address: text('address'),
    expiresAt: text('expires_at').notNull(),
    revokedAt: text('revoked_at'),
    createdAt: text('created_at').notNull().$defaultFn(now),
  },
  (t) => [
    index('access_sessions_policy_idx').on(t.policyId, t.id),
    index('access_sessions_expiry_idx').on(t.expiresAt),
    index('access_sessions_link_idx').on(t.shareLinkId),
  ],
);

/**
 * What a node's agent last reported about its containers' Docker labels (docs/LABELS.md "Bad labels"): the problems
 * of the last pass, for the console's node page. One row per node whose agent watches Docker, replaced by each
 * report. The text is the tenant's, bounded and checked by the contract (LabelProblemsUpdateSchema).
 */
export const nodeLabelReports = sqliteTable('node_label_reports', {
  nodeId: integer('node_id')
    .primaryKey()
    .references(() => nodes.id, { onDelete: 'cascade' }),
  checkedAt: text('checked_at').notNull(),
  problems: text('problems', { mode: 'json' })
    .$type<{ container: string; key?: string | undefined; message: string }[]>()
    .notNull()
    .default(sql`'[]'`),
});

// ---- Notifications (docs/api.md "Notifications") ---------------------------------------------------------------

/**
 * Where the gateway tells the operator that something broke. What is secret (every URL: an incoming webhook's URL is
 * its credential; the signing secret, the ntfy token, the SMTP password) is one AES-256-GCM box of JSON.
 */
export const notificationChannels = sqliteTable('notification_channels', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull().unique(),
  kind: text('kind', { enum: ['webhook', 'slack', 'discord', 'mattermost', 'ntfy', 'email'] }).notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  /** The switches it is on for (NOTIFICATION_EVENTS). */
  events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
  /** What is not secret: `target` (scheme and host of the URL, or host:port) and the SMTP settings. */
  settings: text('settings', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  /** Encrypted JSON of the secrets: url, signingSecret, token, password. */
  secretsEnc: text('secrets_enc').notNull(),
  ...timestamps,
});

/**
 * The delivery queue: one row per message and channel, written in the transaction that decided to send it, delivered
 * by the holder of the `notifications` lease in id order per channel and retried with back-off; kept a week.
 */
export const notificationDeliveries = sqliteTable(
  'notification_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    channelId: integer('channel_id')
      .notNull()
      .references(() => notificationChannels.id, { onDelete: 'cascade' }),
    /** The message (NotificationPayload), the same for every channel it goes to. */
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    status: text('status', { enum: ['pending', 'sent', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Milliseconds since the epoch: when the next attempt is due. */
    nextAttemptAt: integer('next_attempt_at').notNull(),
    /** While a worker sends it (ms since the epoch): another worker leaves it alone until then. */
    claimedUntil: integer('claimed_until'),
    lastError: text('last_error'),
    lastAttemptAt: text('last_attempt_at'),
    createdAt: text('created_at').notNull().$defaultFn(now),
    finishedAt: text('finished_at'),
  },
  (t) => [
    index('notification_deliveries_status_idx').on(t.status, t.channelId, t.id),
    index('notification_deliveries_channel_idx').on(t.channelId, t.id),
  ],
);

/**
 * What the operator has been told is down (a backend, a node, a gateway) or failing (a certificate): one row per
 * thing, inserted with its "down" message and deleted with its "up" one, in the same transaction, so a message is
 * sent once whichever gateway decides it, and a restart neither repeats nor forgets one.
 */
export const notificationAlerts = sqliteTable('notification_alerts', {
  /** `backend:http:12`, `node:3`, `gateway:2`, `certificate:7`, `certificate-expiring:7`. */
  key: text('key').primaryKey(),
  /** Since when it is down (ISO): the duration of the "up" message counts from here. */
  since: text('since').notNull(),
  /** What the message said (names, the certificate's end), for the message that ends it. */
  detail: text('detail', { mode: 'json' }).$type<Record<string, unknown>>(),
  createdAt: text('created_at').notNull().$defaultFn(now),
});
