import { and, eq } from 'drizzle-orm';
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
import { applyChanges } from '../../dataplane-apply.js';
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
): ListResponse<HttpService>;
export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: 'tcp',
  page: NodeServicesQuery,
): ListResponse<TcpService>;
export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  page: NodeServicesQuery,
): ListResponse<AnyService>;
export function listNodeServices(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  page: NodeServicesQuery,
): ListResponse<AnyService> {
  findServiceNode(deps.db, nodeId);
  return type === 'http' ? listHttpServices(deps, { nodeId }, page) : listTcpServices(deps, { nodeId }, page);
}

type ServiceListQuery = PageQuery & ListShape & { domain?: string | null | undefined };

/** Every service of one type, optionally only those on `domain` (the domains list expands rows with this). */
export function listServices(deps: AppDeps, type: 'http', query: ServiceListQuery): ListResponse<HttpService>;
export function listServices(deps: AppDeps, type: 'tcp', query: ServiceListQuery): ListResponse<TcpService>;
export function listServices(deps: AppDeps, type: ServiceType, query: ServiceListQuery): ListResponse<AnyService> {
  const scope = query.domain ? { domain: query.domain } : { all: true as const };
  return type === 'http' ? listHttpServices(deps, scope, query) : listTcpServices(deps, scope, query);
}

export function getService(deps: AppDeps, nodeId: number, type: ServiceType, id: number): AnyService {
  findServiceNode(deps.db, nodeId);
  return type === 'http' ? getHttpService(deps, nodeId, id) : getTcpService(deps, nodeId, id);
}

function updateEnabled(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  id: number,
  enabled: boolean,
  clearsExpiry: boolean,
): boolean {
  const patch = { enabled, updatedAt: deps.now().toISOString(), ...(clearsExpiry && { expiresAt: null }) };
  const changed =
    type === 'http'
      ? deps.db
          .update(httpServices)
          .set(patch)
          .where(and(eq(httpServices.id, id), eq(httpServices.nodeId, nodeId)))
          .run()
      : deps.db
          .update(tcpServices)
          .set(patch)
          .where(and(eq(tcpServices.id, id), eq(tcpServices.nodeId, nodeId)))
          .run();
  return changed.changes > 0;
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

/** Enable/Disable Access: the data plane starts or stops serving the service before this resolves. */
export async function setServiceEnabled(
  deps: AppDeps,
  nodeId: number,
  type: ServiceType,
  id: number,
  enabled: boolean,
): Promise<AnyService> {
  findServiceNode(deps.db, nodeId);
  const current = enabled ? getService(deps, nodeId, type, id) : null;
  if (current) assertServable(deps, current);
  // Enabling a service whose temporary exposure has ended serves it again for good (the sweep would disable it at
  // once).
  const clearsExpiry = current?.expiresAt != null && Date.parse(current.expiresAt) <= deps.now().getTime();
  if (!updateEnabled(deps, nodeId, type, id, enabled, clearsExpiry)) throw notFound('Service');
  await applyChanges(deps, { type, id });
  return getService(deps, nodeId, type, id);
}

export async function deleteService(deps: AppDeps, nodeId: number, type: ServiceType, id: number): Promise<void> {
  findServiceNode(deps.db, nodeId);
  const deleted =
    type === 'http'
      ? deps.db
          .delete(httpServices)
          .where(and(eq(httpServices.id, id), eq(httpServices.nodeId, nodeId)))
          .run()
      : deps.db
          .delete(tcpServices)
          .where(and(eq(tcpServices.id, id), eq(tcpServices.nodeId, nodeId)))
          .run();
  if (deleted.changes === 0) throw notFound('Service');
  // The row is gone, so a rejection has no service to be stored on: it only reaches the caller.
  await applyChanges(deps);
}
