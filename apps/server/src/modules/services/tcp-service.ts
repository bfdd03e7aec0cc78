import { and, eq } from 'drizzle-orm';
import {
  oneOfMessage,
  type ListResponse,
  type PageQuery,
  type TcpService,
  type AgentTcpServiceCreate,
  type TcpServiceUpdate,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { tcpServices } from '../../db/schema.js';
import { fieldError, notFound } from '../../errors.js';
import { resolveExpiry } from './expiry.js';
import { expirySetterOf } from './decisions.js';
import { applyChanges, serviceScope } from '../../dataplane-apply.js';
import { streamKey } from '../../model/desired-state.js';
import { seesEveryNode, type Caller, type ChangeView } from './caller.js';
import { isShapedServiceList, shapedTcpPage, selectTcpPage, type ListScope, type ListShape } from './list-queries.js';
import { toTcpService, type TcpServiceRow } from './present.js';
import { assertNodeQuota } from './node-quotas.js';
import { choosePublicPort, portTaken } from './public-port.js';
import { claimServiceDomain } from './service-domain.js';
import { findServiceNode, resolveBackendHost } from './service-node.js';
import { isUniqueViolation } from '../../db/errors.js';

export async function listTcpServices(
  deps: AppDeps,
  scope: ListScope,
  { page, limit, ...shape }: PageQuery & ListShape,
): Promise<ListResponse<TcpService>> {
  const { rows, total } = isShapedServiceList(shape)
    ? await shapedTcpPage(deps.db, scope, { page, limit }, shape)
    : await selectTcpPage(deps.db, scope, { page, limit });
  return { data: rows.map((row) => toTcpService(deps.config, row)), page, limit, total };
}

async function findTcpRow(deps: AppDeps, nodeId: number, id: number): Promise<TcpServiceRow> {
  const row = await deps.db
    .select()
    .from(tcpServices)
    .where(and(eq(tcpServices.id, id), eq(tcpServices.nodeId, nodeId)))
    .get();
  if (!row) throw notFound('Service');
  return row;
}

export async function getTcpService(deps: AppDeps, nodeId: number, id: number): Promise<TcpService> {
  return toTcpService(deps.config, await findTcpRow(deps, nodeId, id));
}

async function writeOrExplain<T>(
  proto: 'tcp' | 'udp',
  port: number | null | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    // Another process took the port between our check and the insert (the unique index is the last word).
    if (isUniqueViolation(error) && typeof port === 'number') throw portTaken(proto, port);
    throw error;
  }
}

/** TLS termination is a TCP feature; the contract checks the request, this checks the merged result of an edit. */
function assertSslFits(proto: 'tcp' | 'udp', ssl: boolean): void {
  if (ssl && proto === 'udp') throw fieldError('ssl', oneOfMessage(['false']));
}

export async function createTcpService(
  deps: AppDeps,
  nodeId: number,
  body: AgentTcpServiceCreate & { enabled?: boolean },
  caller: Caller,
  view: ChangeView = {},
): Promise<TcpService> {
  const proto = body.proto ?? 'tcp';
  const ssl = body.ssl ?? false;
  assertSslFits(proto, ssl);
  const domain = body.domain ?? null;
  // Without a domain, TLS is terminated with the gateway's own certificate on a port of the console's host name:
  // browsers send the console's session cookie there, and nothing can take it out of a raw stream. A node's token
  // terminates TLS on its own domain only (docs/api.md "Session cookie").
  if (caller === 'node' && ssl && domain === null) {
    throw fieldError(
      'ssl',
      'TLS termination needs a domain of this node (--domain): without one it would be served with the console’s certificate',
    );
  }
  const expiresAt = resolveExpiry(deps, body) ?? null;
  const created = await writeOrExplain(
    proto,
    body.port,
    async () =>
      await deps.db.write(async (tx) => {
        const node = await findServiceNode(tx, nodeId);
        if (caller === 'node') {
          await assertNodeQuota(tx, deps.config, nodeId, 'services');
          await assertNodeQuota(tx, deps.config, nodeId, 'ports');
        }
        await claimServiceDomain(tx, deps.config, caller, nodeId, domain ?? '', 'tcp', view.nodeScope);
        const port = await choosePublicPort(tx, deps.config, proto, body.port, {
          revealOwner: caller === 'admin' && seesEveryNode(view),
        });
        return await tx
          .insert(tcpServices)
          .values({
            nodeId,
            name: body.name,
            domain,
            proto,
            port,
            ssl,
            backendHost: resolveBackendHost(node, body.backendHost),
            backendPort: body.backendPort,
            allowedIps: body.allowedIps ?? [],
            blockedIps: body.blockedIps ?? [],
            expiresAt,
            // The API's creations are enabled; a configuration document may create one disabled.
            enabled: body.enabled ?? true,
            disabledBy: body.enabled === false ? caller : null,
            createdBy: caller,
            // Only a node's agent says a service came from its labels (the admin's schema has no such field).
            source: caller === 'node' ? (body.source ?? null) : null,
            expirySetBy: expiresAt === null ? null : caller,
          })
          .returning({ id: tcpServices.id, port: tcpServices.port })
          .get();
      }),
  );
  const { id } = created;
  await applyChanges(deps, { type: 'tcp', id }, serviceScope('tcp', id, [], [streamKey(proto, created.port)]));
  return await getTcpService(deps, nodeId, id);
}

/**
 * Edits a TCP/UDP service. `port: null` asks for a fresh auto-assigned port; an omitted port keeps the current
 * one (checked again when the protocol changes, since ports are unique per protocol). Edits are the console's
 * (the agent API has none), so the caller is the admin.
 */
export async function updateTcpService(
  deps: AppDeps,
  nodeId: number,
  id: number,
  body: TcpServiceUpdate,
  view: ChangeView = {},
): Promise<TcpService> {
  const current = await findTcpRow(deps, nodeId, id);
  const proto = body.proto ?? current.proto;
  const ssl = body.ssl ?? current.ssl;
  assertSslFits(proto, ssl);
  const domain = body.domain === undefined ? current.domain : body.domain;
  const requestedPort = body.port === undefined ? current.port : body.port;
  const now = deps.now().toISOString();
  const expiresAt = resolveExpiry(deps, body);
  const moved = await writeOrExplain(
    proto,
    requestedPort,
    async () =>
      await deps.db.write(async (tx) => {
        const node = await findServiceNode(tx, nodeId);
        // The instance it leaves, as the row says in this transaction (the read above may be older).
        const before = await tx
          .select({ proto: tcpServices.proto, port: tcpServices.port })
          .from(tcpServices)
          .where(eq(tcpServices.id, id))
          .get();
        // An untouched port stays even if the range was narrowed since: only a change must fit the rules.
        const keepsPort = body.port === undefined && proto === current.proto;
        const port = keepsPort
          ? current.port
          : await choosePublicPort(tx, deps.config, proto, requestedPort, {
              exceptId: id,
              revealOwner: seesEveryNode(view),
            });
        await claimServiceDomain(tx, deps.config, 'admin', nodeId, domain ?? '', 'tcp', view.nodeScope);
        const backendHost = resolveBackendHost(
          node,
          body.backendHost === undefined ? current.backendHost : body.backendHost,
        );
        await tx
          .update(tcpServices)
          .set({
            domain,
            proto,
            port,
            ssl,
            backendHost,
            ...(body.name !== undefined && { name: body.name }),
            ...(body.backendPort !== undefined && { backendPort: body.backendPort }),
            ...(body.allowedIps !== undefined && { allowedIps: body.allowedIps }),
            ...(body.blockedIps !== undefined && { blockedIps: body.blockedIps }),
            ...(expiresAt !== undefined && { expiresAt, expirySetBy: expirySetterOf('admin', expiresAt) }),
            updatedAt: now,
          })
          .where(eq(tcpServices.id, id))
          .run();
        return [streamKey(proto, port), ...(before ? [streamKey(before.proto, before.port)] : [])];
      }),
  );
  await applyChanges(deps, { type: 'tcp', id }, serviceScope('tcp', id, [], moved));
  return await getTcpService(deps, nodeId, id);
}
