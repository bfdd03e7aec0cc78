import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/client.js';
import { touchGateway } from '../modules/gateways/registry.js';

export const HEARTBEAT_INTERVAL_MS = 10_000;

/**
 * Keeps this gateway's `last_seen_at` fresh. A failed heartbeat (the database away) is logged once per outage and
 * never stops anything: the gateway keeps serving, and the next beat after the database is back catches up.
 */
export function startHeartbeat(
  deps: { db: Store; now: () => Date },
  gatewayId: number,
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
  intervalMs = HEARTBEAT_INTERVAL_MS,
): () => void {
  let failing = false;
  let beating = false;
  const beat = async (): Promise<void> => {
    if (beating) return;
    beating = true;
    try {
      await touchGateway(deps, gatewayId);
      if (failing) log.info({}, 'gateways: heartbeat written again');
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, 'gateways: could not write the heartbeat; retried every 10 s');
      failing = true;
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(() => void beat(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
