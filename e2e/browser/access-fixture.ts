import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './server.js';

// What the access browser tests need beyond the API: an OpenID Connect issuer to discover (HTTPS on loopback, its
// certificate handed to the gateway through NODE_EXTRA_CA_CERTS), and visitor sessions. Sessions are made by the
// sign-in exchange on a protected host, which these tests do not run (the data plane is off; the system tests sign
// in through a real provider): they are written into the gateway's database the way the exchange writes them.

const run = promisify(execFile);

export interface DiscoveryIssuer {
  /** `https://127.0.0.1:<port>`: what an operator types as the issuer URL. */
  issuer: string;
  /** The issuer's self-signed certificate: give it to the gateway as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  stop(): Promise<void>;
}

/** An issuer that answers discovery (and nothing else: no sign-in runs here). */
export async function startDiscoveryIssuer(): Promise<DiscoveryIssuer> {
  const dir = mkdtempSync(join(tmpdir(), 'postern-issuer-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  let issuer = '';
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
    if (request.url !== '/.well-known/openid-configuration') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/me`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['openid', 'email', 'profile', 'groups'],
        claims_supported: ['sub', 'email', 'email_verified', 'groups'],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the issuer has no port');
  issuer = `https://127.0.0.1:${String(address.port)}`;
  return {
    issuer,
    caFile: cert,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Statement {
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { lastInsertRowid: number | bigint };
}

interface Sqlite {
  prepare(sql: string): Statement;
  pragma(text: string): unknown;
  close(): void;
}

// The server's own SQLite binding (the e2e package has none).
const serverRequire = createRequire(join(repoRoot, 'apps/server/package.json'));

export interface SeededSession {
  method: 'sso' | 'password' | 'share';
  email?: string;
  user?: string;
  groups?: string[];
  address?: string;
  /** Minutes ago it was made. */
  minutesAgo?: number;
  shareLinkId?: number;
}

/**
 * Live visitor sessions of the policy that applies to `serviceId` on `host` (the service's own, else its domain's),
 * as the sign-in exchange stores them. Returns their ids.
 */
export function seedVisitorSessions(
  dataDir: string,
  target: { serviceId: number; domainId: number; host: string },
  sessions: readonly SeededSession[],
): number[] {
  const Database = serverRequire('better-sqlite3') as new (file: string) => Sqlite;
  const db = new Database(join(dataDir, 'postern.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const policy = (db.prepare('SELECT id FROM access_policies WHERE http_service_id = ?').get(target.serviceId) ??
      db.prepare('SELECT id FROM access_policies WHERE domain_id = ?').get(target.domainId)) as
      { id: number } | undefined;
    if (!policy) throw new Error(`no access policy applies to service ${String(target.serviceId)}`);
    const insert = db.prepare(
      `INSERT INTO access_sessions (sid, policy_id, http_service_id, host, method, share_link_id, subject, email, groups,
        address, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return sessions.map((session) =>
      Number(
        insert.run(
          randomBytes(16).toString('base64url'),
          policy.id,
          target.serviceId,
          target.host,
          session.method,
          session.shareLinkId ?? null,
          session.user ?? null,
          session.email ?? null,
          JSON.stringify(session.groups ?? []),
          session.address ?? null,
          new Date(Date.now() + 24 * 3600_000).toISOString(),
          new Date(Date.now() - (session.minutesAgo ?? 1) * 60_000).toISOString(),
        ).lastInsertRowid,
      ),
    );
  } finally {
    db.close();
  }
}
