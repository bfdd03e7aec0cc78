import { and, asc, count, eq, inArray, isNotNull } from 'drizzle-orm';
import { ATTENTION_MAX_ITEMS, CERTIFICATE_EXPIRING_DAYS, type Attention, type ServiceType } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { domains, httpServices, nodes, tcpServices } from '../../db/schema.js';
import type { HealthChecker } from './health-checker.js';

// What needs the operator's attention, for the home page and for service rows that must not say "Public"
// while their node is offline or their certificate failed. Each list is bounded (ATTENTION_MAX_ITEMS) and counted.
// Reads: the nodes (with the live tunnel status), the domains (with their certificate facts, kept in memory), the
// set-aside rows (an index-free scan of the service tables' apply_error; a few ms at 10,000 services), the health
// checker and the last drift check.

const DAY_MS = 86_400_000;
/** An answer is reused this long unless something it reads changed (certificate facts announce no change). */
export const ATTENTION_MAX_AGE_MS = 10_000;

type CertificateProblem = Attention['certificates']['items'][number]['problem'];

function certificateProblem(
  info: { state: string; notAfter: string | null } | null,
  now: number,
): CertificateProblem | null {
  if (!info) return null;
  if (info.state === 'failed') return 'failed';
  if (info.notAfter === null || info.state === 'pending') return null;
  const end = Date.parse(info.notAfter);
  if (end < now) return 'expired';
  if (end < now + CERTIFICATE_EXPIRING_DAYS * DAY_MS) return 'expiring';
  return null;
}

const bounded = <T>(items: T[]) => ({ total: items.length, items: items.slice(0, ATTENTION_MAX_ITEMS) });

async function serviceNames(deps: AppDeps, refs: { type: ServiceType; id: number }[]) {
  const names = new Map<string, { name: string; nodeId: number; nodeName: string }>();
  for (const type of ['http', 'tcp'] as const) {
    const table = type === 'http' ? httpServices : tcpServices;
    const ids = refs.filter((ref) => ref.type === type).map((ref) => ref.id);
    if (ids.length === 0) continue;
    const rows = await deps.db
      .select({ id: table.id, name: table.name, nodeId: table.nodeId, nodeName: nodes.name })
      .from(table)
      .innerJoin(nodes, eq(nodes.id, table.nodeId))
      .where(inArray(table.id, ids))
      .all();
    for (const row of rows) names.set(`${type}:${row.id}`, row);
  }
  return names;
}

async function setAsideRows(deps: AppDeps) {
  const rows: Attention['setAside']['items'] = [];
  for (const type of ['http', 'tcp'] as const) {
    const table = type === 'http' ? httpServices : tcpServices;
    const found = await deps.db
      .select({
        id: table.id,
        name: table.name,
        nodeId: table.nodeId,
        nodeName: nodes.name,
        applyError: table.applyError,
      })
      .from(table)
      .innerJoin(nodes, eq(nodes.id, table.nodeId))
      .where(and(eq(table.enabled, true), isNotNull(table.applyError)))
      .orderBy(asc(table.id))
      .all();
    for (const row of found) rows.push({ type, ...row, applyError: row.applyError ?? '' });
  }
  return rows;
}

export async function readAttention(deps: AppDeps, health: Pick<HealthChecker, 'list'>): Promise<Attention> {
  const now = deps.now().getTime();
  const nodeRows = await deps.db
    .select({
      id: nodes.id,
      name: nodes.name,
      publicKey: nodes.publicKey,
      enabled: nodes.enabled,
      isLocal: nodes.isLocal,
    })
    .from(nodes)
    .where(eq(nodes.isLocal, false))
    .orderBy(asc(nodes.name))
    .all();
  const offlineNodes: Attention['offlineNodes']['items'] = [];
  const disconnectedNodeIds: number[] = [];
  for (const node of nodeRows) {
    if (!node.enabled) {
      disconnectedNodeIds.push(node.id);
      continue;
    }
    const status = deps.dataPlane.status.get(node.publicKey);
    if ((status?.status ?? 'offline') === 'offline') {
      offlineNodes.push({
        id: node.id,
        name: node.name,
        latestHandshakeTimestamp: status?.latestHandshakeTimestamp ?? null,
      });
    }
  }

  const domainRows = await deps.db
    .select({ id: domains.id, domain: domains.domain })
    .from(domains)
    .orderBy(asc(domains.domain))
    .all();
  const certificates: Attention['certificates']['items'] = [];
  for (const row of domainRows) {
    const info = deps.dataPlane.certificates.info(row.domain);
    const problem = certificateProblem(info, now);
    if (problem && info)
      certificates.push({ id: row.id, domain: row.domain, problem, notAfter: info.notAfter, error: info.error });
  }

  const down = (await health.list()).filter((h) => h.state === 'down');
  down.sort((a, b) => (a.since ?? '').localeCompare(b.since ?? ''));
  const names = await serviceNames(deps, down.slice(0, ATTENTION_MAX_ITEMS));
  const backendsDown = down.flatMap((h) => {
    const known = names.get(`${h.type}:${h.id}`);
    // A service deleted since the last check is no longer anyone's concern.
    return known ? [{ type: h.type, id: h.id, ...known, since: h.since, lastError: h.lastError }] : [];
  });

  const [httpCount] = await deps.db.select({ n: count() }).from(httpServices).all();
  const [tcpCount] = await deps.db.select({ n: count() }).from(tcpServices).all();
  return {
    totals: {
      nodes: nodeRows.length,
      domains: domainRows.length,
      httpServices: httpCount?.n ?? 0,
      tcpServices: tcpCount?.n ?? 0,
    },
    offlineNodes: bounded(offlineNodes),
    disconnectedNodeIds,
    backendsDown: { total: down.length, items: backendsDown },
    certificates: bounded(certificates),
    setAside: bounded(await setAsideRows(deps)),
    drift: deps.dataPlane.lastDrift(),
  };
}

export interface AttentionReader {
  read(): Promise<Attention>;
  /** Unsubscribes from the events that make an answer stale. */
  stop(): void;
}

/**
 * What needs attention, read at most once per change: every console tab polls it, and at 10,000 nodes one read
 * costs tens of milliseconds (every node's status). An answer is dropped when anything it shows may have changed:
 * an entry of the audit log (every API change, expiry, rejection and health verdict is one), a node's tunnel, a
 * backend's health, a drift check; and after ATTENTION_MAX_AGE_MS in any case (a certificate, a change made through
 * another gateway on the same database). Readers arriving while a read runs share it.
 */
export function createAttentionReader(
  deps: AppDeps,
  health: Pick<HealthChecker, 'list' | 'onHealthChange'>,
): AttentionReader {
  let cached: { value: Attention; at: number } | null = null;
  let reading: Promise<Attention> | null = null;
  let generation = 0;
  const drop = () => {
    cached = null;
    generation++;
  };
  const stops = [
    deps.audit.subscribe(drop),
    deps.dataPlane.status.onChange(drop),
    deps.dataPlane.onDrift(drop),
    health.onHealthChange(drop),
  ];
  return {
    async read() {
      const now = deps.now().getTime();
      if (cached && now - cached.at < ATTENTION_MAX_AGE_MS) return cached.value;
      if (reading) return await reading;
      const started = generation;
      reading = readAttention(deps, health)
        .then((value) => {
          // A change during the read may be missing from it: answered, but not kept.
          if (generation === started) cached = { value, at: now };
          return value;
        })
        .finally(() => {
          reading = null;
        });
      return await reading;
    },
    stop() {
      for (const stop of stops) stop();
    },
  };
}
