import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';

// HTTPS to a container the test started, by IP with the name as SNI and Host (no DNS involved), checking the
// certificate against `ca` when given: the console's self-signed certificate is read from the gateway's volume.

export interface HttpsTarget {
  address: string;
  port?: number;
  /** Host name for SNI, the Host header and the certificate check. */
  host: string;
  /** PEM the server's certificate must chain to; undefined accepts any certificate (a node's service). */
  ca?: string;
}

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

export function httpsRequest(
  target: HttpsTarget,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.address,
        port: target.port ?? 443,
        servername: target.host,
        method: init.method ?? 'GET',
        path,
        headers: {
          host: target.host,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        ...(target.ca === undefined ? { rejectUnauthorized: false } : { ca: target.ca }),
        // A fresh connection and TLS session each time: a resumed session may carry no peer certificate.
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- an HTTPS response's socket is its TLS socket
        const certificate: PeerCertificate = (res.socket as TLSSocket).getPeerCertificate();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            fingerprint: certificate.fingerprint256,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`https://${target.host}${path} via ${target.address}: no answer within 15 s`)),
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A JSON API client over `httpsRequest`, signed in with a bearer token once `login` succeeded. */
export class HttpsApi {
  private token: string | null = null;

  constructor(readonly target: HttpsTarget) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const answer = await httpsRequest(this.target, path, {
      method,
      headers: this.token === null ? {} : { authorization: `Bearer ${this.token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    return (answer.headers['content-type'] ?? '').includes('json')
      ? (JSON.parse(answer.body) as T)
      : (answer.body as T);
  }

  async login(username: string, password: string): Promise<void> {
    const { token } = await this.call<{ token: string }>('POST', '/api/auth/login', { username, password });
    this.token = token;
  }
}
