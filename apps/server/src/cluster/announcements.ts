import { isDomainOrWildcard } from '@postern/contract';
import type { Store } from '../db/client.js';
import type { ApplyResult, ApplyScope, DataPlane } from '../dataplane/types.js';
import { createAcmeAcknowledger } from './acme-answers.js';
import { parseStreamKey } from '../model/desired-state.js';

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
  const streams = scope.streams ?? [];
  const tcp = scope.tcp ?? [];
  const nodes = scope.nodes ?? [];
  const payload = JSON.stringify({
    h: scope.hosts,
    s: scope.http,
    ...(streams.length > 0 || tcp.length > 0 ? { p: streams, t: tcp } : {}),
    // Every gateway has its own peer of each node: theirs are patched too.
    ...(nodes.length > 0 ? { n: nodes } : {}),
  });
  return Buffer.byteLength(payload) <= MAX_SCOPE_BYTES ? payload : null;
}

/**
 * The scope another gateway announced; null: not one (any database session may NOTIFY, so nothing in it is trusted:
 * host names must be domain names, wildcards or '', instance keys `tcp-<port>` or `udp-<port>`, ids positive integers).
 */
export function parseScopePayload(payload: string): ApplyScope | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { h, s, p, t, n } = value as { h?: unknown; s?: unknown; p?: unknown; t?: unknown; n?: unknown };
  const listOf = <T>(list: unknown, isOne: (item: unknown) => item is T): T[] | null =>
    Array.isArray(list) && list.length <= 100 && list.every(isOne) ? list : null;
  const isHost = (host: unknown): host is string =>
    typeof host === 'string' && (host === '' || isDomainOrWildcard(host));
  const isId = (id: unknown): id is number => Number.isSafeInteger(id) && (id as number) > 0;
  const isKey = (key: unknown): key is string => typeof key === 'string' && parseStreamKey(key) !== null;
  const hosts = listOf(h, isHost);
  const http = listOf(s, isId);
  if (hosts === null || http === null) return null;
  const nodes = n === undefined ? [] : listOf(n, isId);
  if (nodes === null) return null;
  const ofNodes = nodes.length > 0 ? { nodes } : {};
  if (p === undefined && t === undefined) return { hosts, http, ...ofNodes };
  const streams = listOf(p, isKey);
  const tcp = listOf(t, isId);
  if (streams === null || tcp === null) return null;
  return { hosts, http, streams, tcp, ...ofNodes };
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
