import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ACCESS_PATH } from '@postern/contract';

// What the access browser tests need beyond the console's API: an OpenID Connect issuer to discover (HTTPS on
// loopback, its certificate handed to the gateway through NODE_EXTRA_CA_CERTS), and visitors. Visitors sign in
// through the real sign-in exchange, sent to the control plane as nginx forwards it (Host: the protected host,
// X-Forwarded-For: the visitor); single sign-on through a real provider is the system tests' (e2e/system/access).

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

/** One request to the control plane as nginx forwards the sign-in exchange: Host is the protected host. */
async function exchange(
  baseUrl: string,
  request: { method: 'GET' | 'POST'; path: string; host: string; from: string; form?: Record<string, string> },
): Promise<{ status: number; location: string | undefined }> {
  const body = request.form ? new URLSearchParams(request.form).toString() : undefined;
  const { hostname, port } = new URL(baseUrl);
  return await new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        hostname,
        port,
        method: request.method,
        path: request.path,
        headers: {
          host: request.host,
          // The server trusts X-Forwarded-For from loopback (its own nginx): the visitor's address.
          'x-forwarded-for': request.from,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) }),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, location: response.headers.location }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A visitor signs in with the service's password (the sign-in page's form), from address `from`. */
export async function signInWithPassword(
  baseUrl: string,
  visit: { host: string; serviceId: number; password: string; from: string },
): Promise<void> {
  const answer = await exchange(baseUrl, {
    method: 'POST',
    path: `${ACCESS_PATH}/password`,
    host: visit.host,
    from: visit.from,
    form: { s: String(visit.serviceId), rd: '/', password: visit.password },
  });
  if (answer.status !== 303) throw new Error(`password sign-in on ${visit.host}: HTTP ${String(answer.status)}`);
}

/** A visitor opens a share link, from address `from`. */
export async function openShareLink(baseUrl: string, link: string, from: string): Promise<void> {
  const url = new URL(link);
  const answer = await exchange(baseUrl, {
    method: 'GET',
    path: `${url.pathname}${url.search}`,
    host: url.hostname,
    from,
  });
  if (answer.status !== 302) throw new Error(`share link on ${url.hostname}: HTTP ${String(answer.status)}`);
}
