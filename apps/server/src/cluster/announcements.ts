import { isDomainOrWildcard } from '@postern/contract';
import type { Store } from '../db/client.js';
import type { ApplyResult, ApplyScope, DataPlane } from '../dataplane/types.js';
import { createAcmeAcknowledger } from './acme-answers.js';

// A change made through another gateway on the same database reaches this one as an announcement (PostgreSQL's
// NOTIFY, db/postgres.ts): this gateway applies its own data plane on it (the reconciler merges bursts), then says
// which HTTP-01 answers its nginx serves, so the holder of the `certificates` lease can let the CA ask
// (acme-answers.ts). A lost announcement is caught by the drift check (dataplane/supervisor.ts). A change that names
// its scope (dataplane/README.md "Scoped applies") is announced on the SCOPE_TOPIC with the scope as its payload, and
// applied here as the same scoped run; a payload that does not parse as one applies everything.

/** The topic of a change announced with its scope (db/client.ts `announce`). */
export const SCOPE_TOPIC = 'dataplane.scope';
const MAX_SCOPE_BYTES = 3500;

/** The announcement's payload for `scope`, or null when it is too long to travel (then announce a full change). */
export function scopePayload(scope: ApplyScope): string | null {
  const payload = JSON.stringify({ h: scope.hosts, s: scope.http });
  return Buffer.byteLength(payload) <= MAX_SCOPE_BYTES ? payload : null;
}

/**
 * The scope another gateway announced; null: not one (any database session may NOTIFY, so nothing in it is trusted:
 * host names must be domain names, wildcards or '', ids positive integers).
 */
export function parseScopePayload(payload: string): ApplyScope | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { h, s } = value as { h?: unknown; s?: unknown };
  if (!Array.isArray(h) || !Array.isArray(s) || h.length > 100 || s.length > 100) return null;
  const hosts = h.filter(
    (host): host is string => typeof host === 'string' && (host === '' || isDomainOrWildcard(host)),
  );
  const http = s.filter((id): id is number => Number.isSafeInteger(id) && (id as number) > 0);
  if (hosts.length !== h.length || http.length !== s.length) return null;
  return { hosts, http };
}

export function followAnnouncements(
  deps: { db: Store; dataPlane: Pick<DataPlane, 'apply'>; gatewayId: number },
  onError: (err: unknown) => void,
): () => void {
  const acknowledge = createAcmeAcknowledger(deps.db, deps.gatewayId);
  const apply = (scope?: ApplyScope): void => {
    deps.dataPlane
      .apply(scope)
      .then((result: ApplyResult) => (result.challenges ? acknowledge(result.challenges) : undefined))
      .catch(onError);
  };
  const stopFull = deps.db.onAnnounce(() => apply());
  // null: announcements may have been missed (the LISTEN connection came back): the full listener hears that too.
  const stopScoped = deps.db.onAnnounce(SCOPE_TOPIC, (payload) => {
    if (payload !== null) apply(parseScopePayload(payload) ?? undefined);
  });
  return () => {
    stopFull();
    stopScoped();
  };
}
