import { routes } from '@postern/contract';
import { createHttpClient, type HttpClient } from './http-client.js';

export const HEALTH_TIMEOUT_MS = 2000;

/**
 * What `status --health` asks, from the node's tunnel address. The gateway answers the node's tunnel address
 * only through the tunnel, so an answer proves the tunnel carries traffic.
 */
export type ProbeTarget =
  | {
      /** The gateway's tunnel health URL (agent config `tunnelHealthUrl`): its tunnel address, nginx's HTTP port. */
      healthUrl: string;
      localAddress: string;
    }
  | {
      /**
       * A gateway from before `tunnelHealthUrl`: its API's /api/health at the scheme, port and path of the gateway
       * URL, connecting to `host` (its tunnel address, or for a full tunnel the URL's host). TLS is still checked
       * against the URL's host name, or the pin.
       */
      gatewayUrl: string;
      host: string;
      localAddress: string;
      pin?: string;
    };

/** The health URL the gateway offered, if the probe can use it (http or https, no credentials); else the old probe. */
export function acceptHealthUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
      ? text
      : undefined;
  } catch {
    return undefined;
  }
}

/** 200 within the deadline (connect, TLS and answer together): healthy. Any failure is just "not healthy". */
export async function probeGateway(
  target: ProbeTarget,
  options: { client?: HttpClient; timeoutMs?: number } = {},
): Promise<boolean> {
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  try {
    if ('healthUrl' in target) {
      const client = options.client ?? createHttpClient();
      return (
        (await client({ method: 'GET', url: target.healthUrl, timeoutMs, localAddress: target.localAddress }))
          .status === 200
      );
    }
    const client = options.client ?? createHttpClient(target.pin === undefined ? {} : { pin: target.pin });
    const url = new URL(target.gatewayUrl);
    const answer = await client({
      method: 'GET',
      url: `${url.origin}${url.pathname.replace(/\/+$/, '')}${routes.health.path}`,
      headers: { accept: 'application/json' },
      timeoutMs,
      connectHost: target.host,
      localAddress: target.localAddress,
    });
    return answer.status === 200;
  } catch {
    return false;
  }
}
