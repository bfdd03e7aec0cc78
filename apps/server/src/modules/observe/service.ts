import { HEALTH_CHECK_DEFAULTS, type ServiceType } from '@postern/contract';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { httpServices, tcpServices } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';

// What the observe routes read and write in the database: a service's health-check settings and the list of every
// service with its node. The routes stay thin (apps/server/.dependency-cruiser.cjs).

export interface HealthCheckSettings {
  intervalSeconds: number;
  timeoutSeconds: number;
}

/**
 * Stores the given settings (absent: unchanged) and answers the effective ones (the timeout never above the interval).
 */
export async function updateHealthCheckSettings(
  deps: AppDeps,
  ref: { nodeId: number; type: ServiceType; id: number },
  change: { intervalSeconds?: number | undefined; timeoutSeconds?: number | undefined },
): Promise<HealthCheckSettings> {
  const table = ref.type === 'http' ? httpServices : tcpServices;
  const patch = {
    ...(change.intervalSeconds === undefined ? {} : { healthIntervalSeconds: change.intervalSeconds }),
    ...(change.timeoutSeconds === undefined ? {} : { healthTimeoutSeconds: change.timeoutSeconds }),
  };
  if (Object.keys(patch).length > 0)
    await deps.db.write(
      async (tx) =>
        await tx
          .update(table)
          .set(patch)
          .where(and(eq(table.id, ref.id), eq(table.nodeId, ref.nodeId)))
          .run(),
    );
  const row = await deps.db
    .select({ interval: table.healthIntervalSeconds, timeout: table.healthTimeoutSeconds })
    .from(table)
    .where(eq(table.id, ref.id))
    .get();
  const intervalSeconds = row?.interval ?? HEALTH_CHECK_DEFAULTS.intervalSeconds;
  return {
    intervalSeconds,
    timeoutSeconds: Math.min(row?.timeout ?? HEALTH_CHECK_DEFAULTS.timeoutSeconds, intervalSeconds),
  };
}

/** Every service (both types) with its node. */
export async function listServiceRefs(deps: AppDeps): Promise<{ type: ServiceType; id: number; nodeId: number }[]> {
  const rows = await deps.db.values<[ServiceType, number, number]>(
    sql`select 'http', id, node_id from http_services union all select 'tcp', id, node_id from tcp_services`,
  );
  return rows.map(([type, id, nodeId]) => ({ type, id, nodeId }));
}

/** The named services (`http:12`, `tcp:3`) that exist, with their node: a page's rows, without reading them all. */
export async function listServiceRefsOf(
  deps: AppDeps,
  keys: readonly string[],
): Promise<{ type: ServiceType; id: number; nodeId: number }[]> {
  const refs: { type: ServiceType; id: number; nodeId: number }[] = [];
  for (const type of ['http', 'tcp'] as const) {
    const table = type === 'http' ? httpServices : tcpServices;
    const ids = keys.filter((key) => key.startsWith(`${type}:`)).map((key) => Number(key.slice(type.length + 1)));
    if (ids.length === 0) continue;
    const rows = await deps.db
      .select({ id: table.id, nodeId: table.nodeId })
      .from(table)
      .where(inArray(table.id, ids))
      .all();
    for (const row of rows) refs.push({ type, ...row });
  }
  return refs;
}
