import { assertIPv4, assertPort } from '../validate.js';

/** Where nginx finds and writes things, and which ports it owns. All paths are absolute. */
export interface NginxRenderOptions {
  /** nginx prefix (`-p`): pid, temp dirs, logs. */
  prefixDir: string;
  /** Combined PEM files `<domain>.pem` and `_fallback.pem`. */
  certsDir: string;
  /** ACME HTTP-01 answers live in `<acmeWebroot>/.well-known/acme-challenge/<token>`. */
  acmeWebroot: string;
  httpPort: number;
  httpsPort: number;
  /** Bind one address only (tests bind 127.0.0.1); default all IPv4 addresses. */
  listenAddress?: string;
  /** Unprivileged user nginx workers run as when the master runs as root (they read certificates per handshake). */
  workerUser?: string;
  /** POSTERN_PUBLIC_HOST: when it is a DNS name, TLS clients naming it get the fallback certificate. */
  defaultHostName?: string;
  /** Bound on how long open connections (WebSockets, TCP) of a removed service survive a reload. */
  workerShutdownTimeoutSeconds?: number;
}

export const DEFAULT_WORKER_USER = 'www-data';
export const FALLBACK_CERT_NAME = '_fallback';
export const DEFAULT_WORKER_SHUTDOWN_TIMEOUT_SECONDS = 10;

export function logsDir(options: NginxRenderOptions): string {
  return `${options.prefixDir}/logs`;
}

/** Generation file besides the three configs: where the generation's overlay lives. */
export const OVERLAY_CONF_FILE = 'overlay.conf';

/** The control plane's overlay router, which nginx asks about hosts in the overlay. */
export function overlayRouterSocket(options: Pick<NginxRenderOptions, 'prefixDir'>): string {
  return `${options.prefixDir}/overlay.sock`;
}

/** Overlay files of the generation switched in as `epoch` (a per-process counter; the root is emptied at start). */
export function overlayDir(prefixDir: string, epoch: number): string {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw new Error(`invalid overlay epoch: ${epoch}`);
  return `${prefixDir}/${OVERLAY_ROOT}/${epoch}`;
}

export const OVERLAY_ROOT = 'overlay';

export const HTTP_ACCESS_LOG = 'access-http.log';
export const STREAM_ACCESS_LOG = 'access-stream.log';

export function validateRenderOptions(options: NginxRenderOptions): void {
  assertPort(options.httpPort, 'HTTP port');
  assertPort(options.httpsPort, 'HTTPS port');
  if (options.listenAddress !== undefined) assertIPv4(options.listenAddress, 'listen address');
  if (options.workerUser !== undefined && !/^[a-z_][a-z0-9_-]{0,31}$/.test(options.workerUser)) throw new Error(`invalid worker user: ${JSON.stringify(options.workerUser)}`);
}
