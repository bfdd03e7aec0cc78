import { and, eq, sql } from 'drizzle-orm';
import {
  findReservedPath,
  normalizePathLocation,
  pathLocationsDifferInCase,
  reservedPathMessage,
  ruleMessages,
  type HttpService,
  type AgentHttpServiceCreate,
  type HttpServiceUpdate,
  type ListResponse,
  type PageQuery,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { domains, httpServices } from '../../db/schema.js';
import { fieldError, notFound } from '../../errors.js';
import { resolveExpiry } from './expiry.js';
import { expirySetterOf } from './decisions.js';
import { applyChanges, serviceScope } from '../../dataplane-apply.js';
import { seesEveryNode, type Caller, type ChangeView } from './caller.js';
import type { Tx, ReadDb } from '../../db/client.js';
import { assertNodeQuota } from './node-quotas.js';
import { claimServiceDomain } from './service-domain.js';
import { isShapedServiceList, shapedHttpPage, selectHttpPage, type ListScope, type ListShape } from './list-queries.js';
import { toHttpService, type HttpServiceRow } from './present.js';
import { findServiceNode, resolveBackendHost } from './service-node.js';
import { isUniqueViolation } from '../../db/errors.js';
import { preparedPerDb } from '../../db/prepared.js';

/** Rows with their domain's certificate mode (the service's read-only `ssl`). */
function selectHttpServices(db: ReadDb) {
  return db
    .select({ row: httpServices, ssl: domains.ssl })
    .from(httpServices)
    .leftJoin(domains, eq(domains.domain, httpServices.domain));
}

export async function listHttpServices(
  deps: AppDeps,
  scope: ListScope,
  { page, limit, ...shape }: PageQuery & ListShape,
): Promise<ListResponse<HttpService>> {
  const { rows, total } = isShapedServiceList(shape)
    ? await shapedHttpPage(deps.db, scope, { page, limit }, shape)
    : await selectHttpPage(deps.db, scope, { page, limit });
  return { data: rows.map(({ row, ssl }) => toHttpService(deps.config, row, ssl)), page, limit, total };
}

// A change reads its service once or twice (the audit's before, the answer): prepared once per database, as a list's
// reads are (db/prepared.ts), not built by drizzle at each call.
const httpServiceQuery = preparedPerDb((db: ReadDb) =>
  selectHttpServices(db)
    .where(and(eq(httpServices.id, sql.placeholder('id')), eq(httpServices.nodeId, sql.placeholder('nodeId'))))
    .prepare(),
);

export async function getHttpService(deps: AppDeps, nodeId: number, id: number): Promise<HttpService> {
  const found = await httpServiceQuery(deps.db).get({ id, nodeId });
  if (!found) throw notFound('Service');
  return toHttpService(deps.config, found.row, found.ssl);
}

/** The paths on `domain` at, above or below a path once folded (`below`: the path and '/', `above`: that and '%'). */
const routeCandidatesQuery = preparedPerDb((tx: Tx) =>
  tx
    .select({ id: httpServices.id, name: httpServices.name, pathLocation: httpServices.pathLocation })
    .from(httpServices)
    .where(
      and(
        eq(httpServices.domain, sql.placeholder('domain')),
        sql`(${sql.placeholder('below')} like (lower(${httpServices.pathLocation}) || '/%') or (lower(${httpServices.pathLocation}) || '/') like ${sql.placeholder('above')})`,
      ),
    )
    .prepare(),
);

/**
 * The path must be free on the domain: no other service on it, nor on a path that differs from it only in letter
 * case where it matters (contract pathLocationsDifferInCase: the data plane could not tell the two apart). Only an
 * account that sees every node learns which service holds a route; a node's token, or an account limited to some
 * nodes (docs/api.md "Node scope"), may be asking about another node's.
 */
async function assertRouteFree(
  tx: Tx,
  revealsOwner: boolean,
  domain: string,
  path: string,
  exceptId?: number,
): Promise<void> {
  const folded = path.toLowerCase();
  // Candidates: rows at, above or below the path once folded (LIKE's `_` lets a few more through; checked below).
  const others = await routeCandidatesQuery(tx).all({ domain, below: `${folded}/`, above: `${folded}/%` });
  const name = (other: { name: string }) => (revealsOwner ? other.name : undefined);
  for (const other of others) {
    if (other.id === exceptId) continue;
    if (other.pathLocation === path) throw routeTaken(domain, path, name(other));
    if (pathLocationsDifferInCase(other.pathLocation, path))
      throw routeCaseClash(domain, path, other.pathLocation, name(other));
  }
}

function routeTaken(domain: string, path: string, serviceName?: string) {
  const host = domain === '' ? 'the default host' : domain;
  const owner = serviceName ? ` by the service "${serviceName}"` : '';
  return fieldError('pathLocation', `The path ${path} on ${host} is already used${owner}`);
}

/** The other path is named to the admin only, with its service. */
function routeCaseClash(domain: string, path: string, otherPath: string, serviceName?: string) {
  const host = domain === '' ? 'the default host' : domain;
  const other = serviceName ? `${otherPath} (the service "${serviceName}")` : 'a path already used there';
  return fieldError(
    'pathLocation',
    `The path ${path} on ${host} differs only in letter case from ${other}: the gateway cannot tell such paths apart`,
  );
}

interface RouteInput {
  domain?: string | null | undefined;
  pathLocation?: string | null | undefined;
}

/**
 * Merges a request's domain and path over the stored ones; one of them must remain (the spec's "Validation rules"). A
 * node's token must name a domain: services without one share a single origin among every tenant. No path may shadow
 * what the gateway keeps for itself (contract `reservedPaths`).
 */
function resolveRoute(
  input: RouteInput,
  caller: Caller,
  current?: HttpServiceRow,
): { domain: string; pathLocation: string } {
  const domain = input.domain === undefined ? (current?.domain ?? '') : (input.domain ?? '');
  const path = input.pathLocation === undefined ? current?.pathLocation : input.pathLocation;
  if (domain === '' && caller === 'node') throw fieldError('domain', ruleMessages.domainRequiredForNode);
  if (domain === '' && !path) throw fieldError('pathLocation', ruleMessages.domainOrPath);
  const pathLocation = normalizePathLocation(path || '/');
  const reserved = findReservedPath(pathLocation, domain !== '');
  if (reserved) throw fieldError('pathLocation', reservedPathMessage(reserved));
  return { domain, pathLocation };
}

/**
 * Runs a write; a unique-index violation (a concurrent writer took the route) becomes the same 422 as the pre-check.
 */
async function insertOrExplain<T>(
  route: { domain: string; pathLocation: string },
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw routeTaken(route.domain, route.pathLocation);
    throw error;
  }
}

/** The columns a created service sets (every other one takes its default). */
const NEW_HTTP_COLUMNS = [
  'nodeId',
  'name',
  'domain',
  'pathLocation',
  'backendProto',
  'backendHost',
  'backendPort',
  'allowedIps',
  'blockedIps',
  'expiresAt',
  'enabled',
  'createdBy',
  'source',
  'disabledBy',
  'expirySetBy',
] as const satisfies readonly (keyof typeof httpServices.$inferInsert)[];

type NewHttpRow = Required<Pick<typeof httpServices.$inferInsert, (typeof NEW_HTTP_COLUMNS)[number]>>;

// A create's insert, prepared once per connection with a placeholder per column (db/prepared.ts; the JSON and boolean
// columns are encoded from the placeholders' values as in a built insert), not built by drizzle at each call.
const insertHttpQuery = preparedPerDb((tx: Tx) =>
  tx
    .insert(httpServices)
    .values(
      Object.fromEntries(NEW_HTTP_COLUMNS.map((column) => [column, sql.placeholder(column)])) as unknown as NewHttpRow,
    )
    .returning({ id: httpServices.id })
    .prepare(),
);

export async function createHttpService(
  deps: AppDeps,
  nodeId: number,
  body: AgentHttpServiceCreate,
  caller: Caller,
  view: ChangeView = {},
): Promise<HttpService> {
  const route = resolveRoute(body, caller);
  const expiresAt = resolveExpiry(deps, body) ?? null;
  const id = await insertOrExplain(
    route,
    async () =>
      await deps.db.write(async (tx) => {
        const node = await findServiceNode(tx, nodeId);
        if (caller === 'node') await assertNodeQuota(tx, deps.config, nodeId, 'services');
        // Ownership first: whether a path is taken on someone else's domain is none of a node's business.
        await claimServiceDomain(tx, deps.config, caller, nodeId, route.domain, 'http', view.nodeScope);
        await assertRouteFree(tx, caller === 'admin' && seesEveryNode(view), route.domain, route.pathLocation);
        const row: NewHttpRow = {
          nodeId,
          name: body.name,
          ...route,
          backendProto: body.backendProto ?? 'http',
          backendHost: resolveBackendHost(node, body.backendHost),
          backendPort: body.backendPort ?? 80,
          allowedIps: body.allowedIps ?? [],
          blockedIps: body.blockedIps ?? [],
          expiresAt,
          enabled: body.enabled ?? true,
          createdBy: caller,
          // Only a node's agent says a service came from its labels (the admin's schema has no such field).
          source: caller === 'node' ? (body.source ?? null) : null,
          // Created disabled (to set its access first): the creator's own decision to lift.
          disabledBy: body.enabled === false ? caller : null,
          expirySetBy: expiresAt === null ? null : caller,
        };
        return (await insertHttpQuery(tx).get(row)).id;
      }),
  );
  await applyChanges(deps, { type: 'http', id }, serviceScope('http', id, [route.domain]));
  return await getHttpService(deps, nodeId, id);
}

const httpRowQuery = preparedPerDb((db: ReadDb) =>
  db
    .select()
    .from(httpServices)
    .where(and(eq(httpServices.id, sql.placeholder('id')), eq(httpServices.nodeId, sql.placeholder('nodeId'))))
    .prepare(),
);

const domainOfQuery = preparedPerDb((tx: Tx) =>
  tx
    .select({ domain: httpServices.domain })
    .from(httpServices)
    .where(eq(httpServices.id, sql.placeholder('id')))
    .prepare(),
);

type HttpSet = Partial<typeof httpServices.$inferInsert>;

/** An edit's update per set of columns it writes (an edit writes the fields it was sent: at most 2^6 sets). */
const updateHttpQueries = preparedPerDb((_tx: Tx) => new Map<string, ReturnType<typeof prepareUpdate>>());

const prepareUpdate = (tx: Tx, columns: readonly string[]) =>
  tx
    .update(httpServices)
    .set(Object.fromEntries(columns.map((column) => [column, sql.placeholder(column)])))
    .where(eq(httpServices.id, sql.placeholder('id')))
    .prepare();

// An edit's update, prepared once per connection and set of columns with a placeholder per column (db/prepared.ts;
// the JSON columns are encoded from the placeholders' values as in a built update), not built by drizzle at each call.
function updateHttpQuery(tx: Tx, set: HttpSet): ReturnType<typeof prepareUpdate> {
  const columns = Object.keys(set);
  const key = columns.join(',');
  const byColumns = updateHttpQueries(tx);
  let query = byColumns.get(key);
  if (query === undefined) {
    query = prepareUpdate(tx, columns);
    byColumns.set(key, query);
  }
  return query;
}

/** Edits are the console's (the agent API has none), so the caller is the admin. */
export async function updateHttpService(
  deps: AppDeps,
  nodeId: number,
  id: number,
  body: HttpServiceUpdate,
  view: ChangeView = {},
): Promise<HttpService> {
  const now = deps.now().toISOString();
  const current = await httpRowQuery(deps.db).get({ id, nodeId });
  if (!current) throw notFound('Service');
  const route = resolveRoute(body, 'admin', current);
  const expiresAt = resolveExpiry(deps, body);
  const before = await insertOrExplain(
    route,
    async () =>
      await deps.db.write(async (tx) => {
        const node = await findServiceNode(tx, nodeId);
        // The host it leaves, as committed (a concurrent move may have changed it since `current` was read).
        const was = await domainOfQuery(tx).get({ id });
        await claimServiceDomain(tx, deps.config, 'admin', nodeId, route.domain, 'http', view.nodeScope);
        await assertRouteFree(tx, seesEveryNode(view), route.domain, route.pathLocation, id);
        const backendHost = resolveBackendHost(
          node,
          body.backendHost === undefined ? current.backendHost : body.backendHost,
        );
        const set: HttpSet = {
          ...route,
          ...(body.name !== undefined && { name: body.name }),
          ...(body.backendProto !== undefined && { backendProto: body.backendProto }),
          ...(body.backendPort !== undefined && { backendPort: body.backendPort }),
          ...(body.allowedIps !== undefined && { allowedIps: body.allowedIps }),
          ...(body.blockedIps !== undefined && { blockedIps: body.blockedIps }),
          ...(expiresAt !== undefined && { expiresAt, expirySetBy: expirySetterOf('admin', expiresAt) }),
          backendHost,
          updatedAt: now,
        };
        await updateHttpQuery(tx, set).run({ ...set, id });
        return was?.domain ?? current.domain;
      }),
  );
  await applyChanges(deps, { type: 'http', id }, serviceScope('http', id, [before, route.domain]));
  return await getHttpService(deps, nodeId, id);
}
