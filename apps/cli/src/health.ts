import http from 'node:http';
import https from 'node:https';
import { routes } from '@postern/contract';

export const HEALTH_TIMEOUT_MS = 2000;

export interface ProbeTarget {
  gatewayUrl: string;
  /** Where to connect: the gateway's tunnel address (or, for a full tunnel, the URL's own host). */
  host: string;
  /** The node's tunnel address: the gateway answers it through the tunnel only, so an answer proves the tunnel. */
  localAddress: string;
}

/**
 * GETs the gateway's /api/health with the scheme, port and path of the gateway URL. For https the certificate is
 * still checked against the URL's host name (SNI + Host header); only the connection goes to `host`.
 */
export function probeGateway(target: ProbeTarget, timeoutMs: number = HEALTH_TIMEOUT_MS): Promise<boolean> {
  const url = new URL(target.gatewayUrl);
  const isHttps = url.protocol === 'https:';
  const port = url.port === '' ? (isHttps ? 443 : 80) : Number(url.port);
  const base = url.pathname.replace(/\/+$/, '');
  return new Promise((resolve) => {
    const request = (isHttps ? https : http).request(
      {
        host: target.host,
        port,
        localAddress: target.localAddress,
        path: base + routes.health.path,
        method: 'GET',
        headers: { host: url.host, accept: 'application/json' },
        ...(isHttps ? { servername: url.hostname } : {}),
      },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    // One deadline for connect, TLS and answer: that is what `--health` promises.
    const deadline = setTimeout(() => request.destroy(new Error('timeout')), timeoutMs);
    request.on('error', () => resolve(false));
    request.on('close', () => clearTimeout(deadline));
    request.end();
  });
}
