import { and, eq, isNotNull, lte } from 'drizzle-orm';
import { limits, ruleMessages, type ServiceType } from '@postern/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { applyChanges } from '../../dataplane-apply.js';
import { httpServices, tcpServices } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import { createSingleFlight } from '../../lib/serial.js';

// Temporary exposure: a service with `expiresAt` is disabled (kept, not deleted) once that time has
// passed. The sweep runs every second off the request path, and once at boot before the data plane starts, so an
// expiry that passed while the gateway was down is never served again.

/** How often the sweep looks for services whose expiry has passed: "within a few seconds" of it. */
export const EXPIRY_SWEEP_MS = 1000;

interface ExpiryInput {
  expiresAt?: string | null | undefined;
  ttl?: number | undefined;
}

/**
 * The expiry a create or edit asks for: undefined keeps the stored one (create: none), null clears it. `ttl` counts
 * on the gateway's clock; an `expiresAt` in the past, or further ahead than the longest `ttl` (366 days), beyond the
 * tolerated clock skew either way, is refused: a far expiry is no expiry.
 */
export function resolveExpiry(deps: Pick<AppDeps, 'now'>, input: ExpiryInput): string | null | undefined {
  const now = deps.now().getTime();
  if (input.ttl !== undefined) return new Date(now + input.ttl * 1000).toISOString();
  if (input.expiresAt === undefined || input.expiresAt === null) return input.expiresAt;
  const at = Date.parse(input.expiresAt);
  if (at < now - limits.expirySkewMs) throw fieldError('expiresAt', ruleMessages.pastDate);
  if (at > now + limits.serviceTtlMaxSeconds * 1000 + limits.expirySkewMs)
    throw fieldError('expiresAt', ruleMessages.expiryTooFar);
  return new Date(at).toISOString();
}

export interface ExpiredService {
  type: ServiceType;
  id: number;
  nodeId: number;
  name: string;
  domain: string | null;
  expiresAt: string;
}

/** Disables every enabled service whose expiry has passed and records each in the audit log (DB only, no I/O). */
export async function disableExpiredServices(deps: Pick<AppDeps, 'db' | 'now' | 'audit'>): Promise<ExpiredService[]> {
  const now = deps.now().toISOString();
  const expired: ExpiredService[] = [];
  await deps.db.write(async (tx) => {
    for (const [type, table] of [
      ['http', httpServices],
      ['tcp', tcpServices],
    ] as const) {
      const due = and(eq(table.enabled, true), isNotNull(table.expiresAt), lte(table.expiresAt, now));
      const rows = await tx
        .update(table)
        .set({ enabled: false, disabledBy: 'system', updatedAt: now })
        .where(due)
        .returning()
        .all();
      for (const row of rows) {
        expired.push({
          type,
          id: row.id,
          nodeId: row.nodeId,
          name: row.name,
          domain: row.domain || null,
          expiresAt: row.expiresAt ?? now,
        });
      }
    }
  });
  for (const service of expired) {
    await deps.audit.record({
      actor: { kind: 'system' },
      action: 'service.expired',
      target: { type: service.type, id: service.id, name: service.name },
      nodeId: service.nodeId,
      domain: service.domain,
      before: { enabled: true, expiresAt: service.expiresAt },
      after: { enabled: false, expiresAt: service.expiresAt },
    });
  }
  return expired;
}

/**
 * Starts the sweep; the data plane is asked to converge only when something expired. With several gateways only the
 * holder of the `service-expiry` lease sweeps (the others apply what it disabled when it announces).
 */
export function startExpirySweep(deps: AppDeps, log: FastifyBaseLogger): { stop(): void } {
  const sweepOnce = createSingleFlight(async (): Promise<void> => {
    try {
      const expired = await disableExpiredServices(deps);
      if (expired.length > 0) {
        log.info(
          { services: expired.map(({ type, id }) => `${type}/${id}`) },
          'temporary exposure ended: services disabled',
        );
        await applyChanges(deps);
      }
    } catch (error) {
      // Saved either way; the heal loop or the next change applies it.
      log.warn({ err: error }, 'expiry sweep could not apply its change yet');
    }
  });
  const sweep = async (): Promise<void> => {
    if (deps.leases.holds('service-expiry')) await sweepOnce();
  };
  const timer = setInterval(() => void sweep(), EXPIRY_SWEEP_MS);
  timer.unref();
  void sweep();
  return { stop: () => clearInterval(timer) };
}
