import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { GatewayCertificateError } from './errors.js';
import { pinOfCertificate } from './pin.js';

// The one way the CLI sends an HTTP request (agent API and health probe), so every request gets the same TLS
// rules. The connection is opened and its certificate judged BEFORE the request is handed the socket: nothing,
// least of all the token, is written to a server that has not passed.
//
// Trust, for https:
// - no pin: the certificate must chain to Node's CA store (plus NODE_EXTRA_CA_CERTS, which Node reads at start)
//   and name the URL's host;
// - a pin: the certificate's public key must match it; CA and host name are not checked (a self-signed gateway).

export interface TlsSettings {
  /** `sha256:<base64>` (see pin.ts); undefined: verify against the CA store. */
  pin?: string;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** One deadline for connect, TLS and the whole answer. */
  timeoutMs: number;
  /** Connect here instead of the URL's host; Host header, TLS server name and certificate checks still use the URL. */
  connectHost?: string;
  /** Source address of the connection. */
  localAddress?: string;
}

export interface HttpAnswer {
  status: number;
  body: string;
  /** Where a redirect points; redirects are never followed (the token would travel along). */
  location?: string;
}

export type HttpClient = (request: HttpRequest) => Promise<HttpAnswer>;

/** An answer larger than this is not an agent API answer: stop reading instead of filling memory. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class RequestTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs / 1000} s`);
    this.name = 'TimeoutError';
  }
}

export function createHttpClient(settings: TlsSettings = {}): HttpClient {
  return (request) => send(request, settings);
}

function send(request: HttpRequest, settings: TlsSettings): Promise<HttpAnswer> {
  const url = new URL(request.url);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const isHttps = url.protocol === 'https:';
  const target: Target = {
    host: request.connectHost ?? hostname,
    port: url.port === '' ? (isHttps ? 443 : 80) : Number(url.port),
    hostname,
    origin: url.origin,
    ...(request.localAddress === undefined ? {} : { localAddress: request.localAddress }),
  };
  const abort = new AbortController();
  return new Promise<HttpAnswer>((resolve, reject) => {
    let socket: net.Socket | undefined;
    const timer = setTimeout(() => fail(new RequestTimeoutError(request.timeoutMs)), request.timeoutMs);
    function fail(error: unknown): void {
      clearTimeout(timer);
      abort.abort();
      socket?.destroy();
      reject(error instanceof Error ? error : new Error(String(error)));
    }
    const connected = isHttps ? connectTls(target, settings, abort.signal) : connectPlain(target, abort.signal);
    connected.then((ready) => {
      socket = ready;
      const body = request.body === undefined ? undefined : Buffer.from(request.body);
      const outgoing = http.request(
        {
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers: {
            host: url.host,
            ...request.headers,
            ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          },
          createConnection: () => ready,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) fail(new Error(`the answer exceeds ${MAX_BODY_BYTES} bytes`));
            else chunks.push(chunk);
          });
          response.on('end', () => {
            clearTimeout(timer);
            ready.destroy();
            const { location } = response.headers;
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              ...(location === undefined ? {} : { location }),
            });
          });
          response.on('error', fail);
        },
      );
      outgoing.on('error', fail);
      outgoing.end(body);
    }, fail);
  });
}

interface Target {
  /** Where to connect. */
  host: string;
  port: number;
  /** The URL's host: TLS server name and the name the certificate must carry. */
  hostname: string;
  origin: string;
  localAddress?: string;
}

function connectPlain(target: Target, signal: AbortSignal): Promise<net.Socket> {
  return whenReady(net.connect({ host: target.host, port: target.port, ...local(target) }), 'connect', signal);
}

async function connectTls(target: Target, settings: TlsSettings, signal: AbortSignal): Promise<tls.TLSSocket> {
  const socket = tls.connect({
    host: target.host,
    port: target.port,
    ...local(target),
    // RFC 6066: the server name is a DNS name, never an address.
    ...(net.isIP(target.hostname) === 0 ? { servername: target.hostname } : {}),
    ALPNProtocols: ['http/1.1'],
    // Judged below, after the handshake and before any byte of the request.
    rejectUnauthorized: false,
    checkServerIdentity: (_host, certificate) => tls.checkServerIdentity(target.hostname, certificate),
  });
  await whenReady(socket, 'secureConnect', signal);
  try {
    judgeCertificate(socket, target, settings);
  } catch (error) {
    socket.destroy();
    throw error;
  }
  return socket;
}

function judgeCertificate(socket: tls.TLSSocket, target: Target, settings: TlsSettings): void {
  const certificate = socket.getPeerCertificate();
  if (settings.pin !== undefined) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a peer without a certificate gives {}
    const presented = certificate.raw === undefined ? 'none' : pinOfCertificate(certificate.raw);
    if (presented !== settings.pin) {
      throw new GatewayCertificateError(
        `The gateway at ${target.origin} presented a certificate with pin ${presented}, not the pinned ${settings.pin}: ` +
          "nothing was sent. If the gateway's certificate was replaced, copy the new connect command (with its --pin) from the console.",
      );
    }
    return;
  }
  if (!socket.authorized) {
    throw new GatewayCertificateError(
      `The gateway's certificate at ${target.origin} is not trusted: ${describeVerifyError(socket, target)}; nothing was sent. ` +
        'For a gateway with its own self-signed certificate, use the connect command from the console, which pins it ' +
        '(--pin sha256:…, or POSTERN_PIN); for a private CA, add the CA with NODE_EXTRA_CA_CERTS=/path/ca.pem.',
    );
  }
}

const VERIFY_ERRORS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'it is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its chain ends in a self-signed CA this machine does not trust',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'it was issued by a CA this machine does not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'it was issued by a CA this machine does not trust',
  CERT_HAS_EXPIRED: 'it has expired',
  CERT_NOT_YET_VALID: 'it is not valid yet',
};

function describeVerifyError(socket: tls.TLSSocket, target: Target): string {
  const code = String(socket.authorizationError);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return (
      tls.checkServerIdentity(target.hostname, socket.getPeerCertificate())?.message ??
      `it does not name ${target.hostname}`
    );
  }
  return `${VERIFY_ERRORS[code] ?? 'verification failed'} (${code})`;
}

function local(target: Target): { localAddress?: string } {
  return target.localAddress === undefined ? {} : { localAddress: target.localAddress };
}

/** Resolves with the socket once `event` fires; an error or the abort destroys it. */
function whenReady<T extends net.Socket>(
  socket: T,
  event: 'connect' | 'secureConnect',
  signal: AbortSignal,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      socket.destroy();
      reject(new Error('aborted'));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    socket.once(event, () => {
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
  });
}
