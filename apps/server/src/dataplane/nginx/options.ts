import { join } from 'node:path';
import { assertHost, assertIPv4, assertPort } from '../validate.js';

/** Where nginx finds and writes things, and which ports it owns. All paths are absolute. */
export interface NginxRenderOptions {
  /** nginx prefix (`-p`) of the HTTP instance; stream instances live below it in `stream/<proto>-<port>/`. */
  prefixDir: string;
  /** Combined PEM files `<domain>.pem` and `_fallback.pem` (read by the master only, as root). */
  certsDir: string;
  httpPort: number;
  httpsPort: number;
  /** HTTPS port where HTTP services without a domain are published: an origin apart from the console's. */
  noDomainHttpsPort: number;
  /** Bind one address only (tests bind 127.0.0.1); default all IPv4 addresses. */
  listenAddress?: string;
  /** Unprivileged user nginx workers run as (the masters run as root). */
  workerUser?: string;
  /** POSTERN_PUBLIC_HOST: the console's host name (or IP) on the HTTPS port; nothing else is served there. */
  consoleHost: string;
  /** The control plane as nginx reaches it, `http://127.0.0.1:3000`. */
  consoleUpstream: string;
  /** The gateway's own tunnel address: on port 80 it answers only the nodes' tunnel health check. */
  tunnelAddress: string | null;
  /** Name servers for backends given by host name (resolved per request, never at load). */
  resolvers: readonly string[];
  /** Count traffic per service in nginx (default on; off only to measure what counting costs, bench/traffic.ts). */
  countTraffic?: boolean;
  /** Connections per worker of the HTTP instance (nginx/sizing.ts); default 4,096. */
  workerConnections?: number;
  /** Open files per worker of the HTTP instance (`worker_rlimit_nofile`); default twice the connections and 1,024. */
  workerOpenFiles?: number;
  /** Seconds for a TLS handshake and, again, for a request's headers on the HTTP(S) ports; default 10. */
  handshakeTimeoutSeconds?: number;
}

export const DEFAULT_WORKER_CONNECTIONS = 4096;
export const DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 10;

export const DEFAULT_WORKER_USER = 'www-data';
export const FALLBACK_CERT_NAME = '_fallback';

export const HTTP_ACCESS_LOG = 'access-http.log';
export const STREAM_ACCESS_LOG = 'access-stream.log';

export const logsDir = (options: Pick<NginxRenderOptions, 'prefixDir'>): string => join(options.prefixDir, 'logs');
/** Root only (0700): nginx's control socket inside is 0666, so the directory is its only lock. */
export const controlDir = (prefixDir: string): string => join(prefixDir, 'control');
export const controlSocket = (prefixDir: string): string => join(controlDir(prefixDir), 'control.sock');
/** What a fresh master loads before its first request (routes and the certificate names to read). */
export const snapshotFile = (prefixDir: string): string => join(prefixDir, 'state', 'routes.json');
/** What a fresh master loads of access (policies, the cookie key, revocations) with the routes (docs/ACCESS.md). */
export const accessSnapshotFile = (prefixDir: string): string => join(prefixDir, 'state', 'access.json');
export const streamRoot = (prefixDir: string): string => join(prefixDir, 'stream');

export function validateRenderOptions(options: NginxRenderOptions): void {
  assertPort(options.httpPort, 'HTTP port');
  assertPort(options.httpsPort, 'HTTPS port');
  assertPort(options.noDomainHttpsPort, 'no-domain HTTPS port');
  if (options.listenAddress !== undefined) assertIPv4(options.listenAddress, 'listen address');
  if (options.tunnelAddress !== null) assertIPv4(options.tunnelAddress, 'tunnel address');
  assertHost(options.consoleHost, 'console host');
  if (!/^http:\/\/[0-9.]+:\d{1,5}$/.test(options.consoleUpstream))
    throw new Error(`invalid console upstream: ${JSON.stringify(options.consoleUpstream)}`);
  if (options.workerUser !== undefined && !/^[a-z_][a-z0-9_-]{0,31}$/.test(options.workerUser))
    throw new Error(`invalid worker user: ${JSON.stringify(options.workerUser)}`);
  for (const resolver of options.resolvers) assertIPv4(resolver, 'name server');
  if (options.workerConnections !== undefined)
    assertIntInRange(options.workerConnections, 1024, 262_144, 'worker connections');
  if (options.workerOpenFiles !== undefined) assertIntInRange(options.workerOpenFiles, 1024, 1_048_576, 'open files');
  if (options.handshakeTimeoutSeconds !== undefined)
    assertIntInRange(options.handshakeTimeoutSeconds, 1, 300, 'handshake timeout');
}

function assertIntInRange(value: number, min: number, max: number, field: string): void {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`invalid ${field}: ${JSON.stringify(value)} (a whole number from ${min} to ${max})`);
}
