import { and, eq, sql } from 'drizzle-orm';
import {
  findReservedPath,
  type HttpService,
  type ListResponse,
  type PageQuery,
  type ServiceType,
  type TcpService,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { httpServices, tcpServices } from '../../db/schema.js';
import { badRequest, notFound } from '../../errors.js';
import { applyChanges, serviceScope } from '../../dataplane-apply.js';
import { streamKey } from '../../model/desired-state.js';
import type { Tx } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import type { Caller } from './caller.js';
import { afterSetEnabled, assertMayDelete, assertMayEnable, type ServiceDecisions } from './decisions.js';
import { getHttpService, listHttpServices } from './http-service.js';
import type { ListShape } from './list-queries.js';
import { findServiceNode } from './service-node.js';
import { getTcpService, listTcpServices } from './tcp-service.js';

// The type-independent service operations. The console routes and the agent API (scoped to the token's node)
// both call these, so the rules live in one place.

export { createHttpService, updateHttpService } from './http-service.js';
export { createTcpService, updateTcpService } from './tcp-service.js';
export { findServices } from './find-services.js';

export type AnyService = HttpService | TcpService;

type NodeServicesQuery = PageQuery & ListShape;

export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: 'http',
  page: NodeServicesQuery,
): Promise<ListResponse<HttpService>>;
export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: 'tcp',
  page: NodeServicesQuery,
): Promise<ListResponse<TcpService>>;
export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  page: NodeServicesQuery,
): Promise<ListResponse<AnyService>>;
export async function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  page: NodeServicesQuery,
): Promise<ListResponse<AnyService>> {
  await findServiceNode(deps.db, nodeId);
  return type === 'http'
    ? await listHttpServices(deps, { nodeId }, page)
    : await listTcpServices(deps, { nodeId }, page);
}

type ServiceListQuery = PageQuery & ListShape & { domain?: string | null | undefined };

/** Every service of one type, optionally only those on `domain` (the domains list expands rows with this). */
/** `nodes`: only services of these nodes (the node scope of the account asking); null: every node's. */
export function listServices(
  deps: AppDeps,
  type: 'http',
  query: ServiceListQuery,
  nodes?: readonly number[] | null,
): Promise<ListResponse<HttpService>>;
export function listServices(
  deps: AppDeps,
  type: 'tcp',
  query: ServiceListQuery,
  nodes?: readonly number[] | null,
): Promise<ListResponse<TcpService>>;
export async function listServices(
  deps: AppDeps,
  type: ServiceType,
  query: ServiceListQuery,
  nodes: readonly number[] | null = null,
): Promise<ListResponse<AnyService>> {
  const scope = query.domain ? { domain: query.domain } : { all: true as const };
  const shaped = { ...query, nodes };
  return type === 'http' ? await listHttpServices(deps, scope, shaped) : await listTcpServices(deps, scope, shaped);
}

export async function getService(deps: AppDeps, nodeId: number, type: ServiceType, id: number): Promise<AnyService> {
  await findServiceNode(deps.db, nodeId);
  return type === 'http' ? await getHttpService(deps, nodeId, id) : await getTcpService(deps, nodeId, id);
}

/**
 * A service stored before the current rules (an earlier version accepted reserved paths and the console's host
 * name; the migration disabled such services) is not served again until it is edited to fit them.
 */
function assertServable(deps: AppDeps, service: AnyService): void {
  const consoleHost = deps.config.publicHost.toLowerCase();
  if (service.domain === consoleHost) {
    throw badRequest(
      `The service uses the console's host name ${consoleHost}: move it to another domain before enabling it`,
    );
  }
  const path = 'pathLocation' in service ? service.pathLocation : null;
  const reserved = path === null ? null : findReservedPath(path, service.domain !== null);
  if (reserved && path !== null)
    throw badRequest(
      `The service's path ${path} is reserved (${reserved} and below): change its path before enabling it`,
    );
}

/** The service's row as the decision rules read it, inside the caller's transaction; undefined when it is not there. */
async function readDecisions(
  tx: Tx,
  type: ServiceType,
  nodeId: number,
  id: number,
): Promise<(ServiceDecisions & { domain: string | null }) | undefined> {
  return await decisionsQuery[type](tx).get({ id, nodeId });
}

function prepareDecisions(table: typeof httpServices | typeof tcpServices) {
  return preparedPerDb((tx: Tx) =>
    tx
      .select({
        domain: table.domain,
        enabled: table.enabled,
        expiresAt: table.expiresAt,
        createdBy: table.createdBy,
        disabledBy: table.disabledBy,
        expirySetBy: table.expirySetBy,
      })
      .from(table)
      .where(and(eq(table.id, sql.placeholder('id')), eq(table.nodeId, sql.placeholder('nodeId'))))
      .prepare(),
  );
}

function prepareDelete(table: typeof httpServices | typeof tcpServices) {
  return preparedPerDb((tx: Tx) =>
    tx
      .delete(table)
      .where(and(eq(table.id, sql.placeholder('id')), eq(table.nodeId, sql.placeholder('nodeId'))))
      .prepare(),
  );
}

// A service's change reads its decisions and a delete removes its row: prepared once per connection.
const decisionsQuery = { http: prepareDecisions(httpServices), tcp: prepareDecisions(tcpServices) };
const deleteStatement = { http: prepareDelete(httpServices), tcp: prepareDelete(tcpServices) };

/** The TCP/UDP instance a service is served by (`streamKey`); an HTTP service has none. */
async function streamsOf(tx: Tx, type: ServiceType, id: number): Promise<string[]> {
  if (type === 'http') return [];
  const row = await tx
    .select({ proto: tcpServices.proto, port: tcpServices.port })
    .from(tcpServices)
    .where(eq(tcpServices.id, id))
    .get();
  return row ? [streamKey(row.proto, row.port)] : [];
}

/**
 * Enable/Disable Access: the data plane starts or stops serving the service before this resolves. A node's token is
 * refused (403) where the operator decided otherwise (decisions.ts); the check and the change are one transaction,
 * so an operator's disable in between is never overwritten.
 */
export async function setServiceEnabled(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  id: number,
  enabled: boolean,
  caller: Caller,
): Promise<AnyService> {
  await findServiceNode(deps.db, nodeId);
  if (enabled) assertServable(deps, await getService(deps, nodeId, type, id));
  const now = deps.now();
  const found = await deps.db.write(async (tx) => {
    const row = await readDecisions(tx, type, nodeId, id);
    if (!row) return null;
    if (enabled) assertMayEnable(caller, row, now);
    const patch = { enabled, updatedAt: now.toISOString(), ...afterSetEnabled(caller, row, enabled, now) };
    const table = type === 'http' ? httpServices : tcpServices;
    await tx
      .update(table)
      .set(patch)
      .where(and(eq(table.id, id), eq(table.nodeId, nodeId)))
      .run();
    return { domain: row.domain, streams: await streamsOf(tx, type, id) };
  });
  if (!found) throw notFound('Service');
  await applyChanges(deps, { type, id }, serviceScope(type, id, [found.domain], found.streams));
  return await getService(deps, nodeId, type, id);
}

/** Deletes a service; a node's token only one it created and the operator has not decided about (decisions.ts). */
export async function deleteService(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  id: number,
  caller: Caller,
): Promise<void> {
  await findServiceNode(deps.db, nodeId);
  const found = await deps.db.write(async (tx) => {
    const row = await readDecisions(tx, type, nodeId, id);
    if (!row) return null;
    assertMayDelete(caller, row);
    const streams = await streamsOf(tx, type, id);
    await deleteStatement[type](tx).run({ id, nodeId });
    return { domain: row.domain, streams };
  });
  if (!found) throw notFound('Service');
  // The row is gone, so a rejection has no service to be stored on: it only reaches the caller.
  await applyChanges(deps, undefined, serviceScope(type, id, [found.domain], found.streams));
}
