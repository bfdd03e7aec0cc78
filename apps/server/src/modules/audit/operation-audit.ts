import { eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperationName, ServiceType } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { domains, nodes, personalAccessTokens } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { operationOf } from '../../http/operation.js';
import { getInvite } from '../accounts/invites.js';
import { getAccount } from '../accounts/service.js';
import { getDomain } from '../domains/service.js';
import { gatewayNetworksOf } from '../nodes/to-node.js';
import { getService, type AnyService } from '../services/service.js';
import { toToken } from '../tokens/service.js';
import { accessAudited, accessRefOf, isAccessRef, loadAccessSnapshot, type AccessKind } from './access-audit.js';
import { loadNotificationChannel, NOTIFICATION_CHANNEL, notificationAudited } from './notification-audit.js';
import type { AuditActor, AuditTarget } from './recorder.js';

// Every change made through the API is recorded here, from the route table, in one place: each audited operation
// names its action and how to find its target; the target is loaded (as its contract view, scrubbed of secrets)
// before the handler runs and again after it answered, giving `before` and `after`. A refused request changed
// nothing and is not recorded, except a change the data plane set aside (saved, not served: recorded with the
// reason). Sign-in, failed sign-ins and failed re-checks of the password are recorded by the auth module itself
// (modules/auth/auth-audit.ts), the failures summed per client.

type Kind =
  'node' | 'token' | 'domain' | 'service' | 'account' | 'invite' | 'none' | AccessKind | typeof NOTIFICATION_CHANNEL;

export interface Audited {
  action: string;
  kind: Kind;
}

const audited: Partial<Record<OperationName, Audited>> = {
  logout: { action: 'auth.sign-out', kind: 'none' },
  changePassword: { action: 'auth.password-change', kind: 'none' },
  createNode: { action: 'node.create', kind: 'node' },
  updateNode: { action: 'node.update', kind: 'node' },
  deleteNode: { action: 'node.delete', kind: 'node' },
  enableNode: { action: 'node.enable', kind: 'node' },
  disableNode: { action: 'node.disable', kind: 'node' },
  createToken: { action: 'token.create', kind: 'token' },
  revokeToken: { action: 'token.revoke', kind: 'token' },
  deleteToken: { action: 'token.delete', kind: 'token' },
  createDomain: { action: 'domain.create', kind: 'domain' },
  updateDomain: { action: 'domain.update', kind: 'domain' },
  deleteDomain: { action: 'domain.delete', kind: 'domain' },
  createHttpService: { action: 'service.create', kind: 'service' },
  createTcpService: { action: 'service.create', kind: 'service' },
  updateHttpService: { action: 'service.update', kind: 'service' },
  updateTcpService: { action: 'service.update', kind: 'service' },
  enableService: { action: 'service.enable', kind: 'service' },
  disableService: { action: 'service.disable', kind: 'service' },
  deleteService: { action: 'service.delete', kind: 'service' },
  agentCreateHttpService: { action: 'service.create', kind: 'service' },
  agentCreateTcpService: { action: 'service.create', kind: 'service' },
  agentEnableService: { action: 'service.enable', kind: 'service' },
  agentDisableService: { action: 'service.disable', kind: 'service' },
  agentDeleteService: { action: 'service.delete', kind: 'service' },
  agentSetGatewayNetworks: { action: 'node.networks', kind: 'node' },
  // One entry for the run; each object it changed has its own (modules/config/apply.ts).
  applyConfig: { action: 'config.apply', kind: 'none' },
  // Accounts (docs/api.md "Accounts and roles"): the owners' changes; a taken invite and a first sign-in through a
  // provider are recorded by the accounts and auth modules (no session makes them).
  updateAccount: { action: 'account.update', kind: 'account' },
  deleteAccount: { action: 'account.delete', kind: 'account' },
  resetAccountTwoFactor: { action: 'account.two-factor-reset', kind: 'account' },
  unlinkAccountIdentity: { action: 'account.identity-unlink', kind: 'account' },
  createInvite: { action: 'account.invite', kind: 'invite' },
  revokeInvite: { action: 'account.invite-revoke', kind: 'invite' },
  ...accessAudited,
  ...notificationAudited,
};

/** What an entry is about: the row, plus the node and domain the filters find it by. */
export interface Ref {
  type: string;
  id: number | null;
  nodeId: number | null;
}

export interface Snapshot {
  view: Record<string, unknown>;
  name: string | null;
  nodeId: number | null;
  domain: string | null;
}

interface AuditState {
  spec: Audited;
  ref: Ref | null;
  before: Snapshot | null;
  createdId: number | null;
  error: unknown;
  /** A successful service change's answer (its contract view, read after the change): the entry's `after`. */
  answer: unknown;
}

declare module 'fastify' {
  interface FastifyRequest {
    audit: AuditState | null;
  }
}

type Params = Record<string, unknown>;
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);

function serviceTypeOf(name: OperationName, params: Params): ServiceType {
  if (name.endsWith('HttpService')) return 'http';
  if (name.endsWith('TcpService')) return 'tcp';
  return params.type === 'tcp' ? 'tcp' : 'http';
}

/** The target a request names; created rows get their id from the answer. */
function refOf(request: FastifyRequest, name: OperationName, kind: Kind, createdId: number | null): Ref | null {
  const params = (request.params ?? {}) as Params;
  const agentNodeId = request.agentNode?.id ?? null;
  switch (kind) {
    case 'node': {
      // The agent's node calls name their node by the token, not the path.
      const id = num(params.id) ?? agentNodeId ?? createdId;
      return { type: 'node', id, nodeId: id };
    }
    case 'token':
      return { type: 'token', id: num(params.tokenId) ?? createdId, nodeId: num(params.id) };
    case 'domain':
      return { type: 'domain', id: num(params.id) ?? createdId, nodeId: null };
    case 'account':
    case 'invite':
      return { type: kind, id: num(params.id) ?? createdId, nodeId: null };
    case 'service':
      return {
        type: serviceTypeOf(name, params),
        id: num(params.id) ?? createdId,
        nodeId: agentNodeId ?? num(params.nodeId),
      };
    case 'none':
      return null;
    case NOTIFICATION_CHANNEL:
      return { type: NOTIFICATION_CHANNEL, id: num(params.id) ?? createdId, nodeId: null };
    default:
      return accessRefOf(kind, params, agentNodeId, createdId);
  }
}

/** Volatile or derived fields stay out of snapshots: they would make every before/after differ. */
function strip(view: Record<string, unknown>): Record<string, unknown> {
  const { created_at: _c, updated_at: _u, ...rest } = view;
  return rest;
}

async function load(deps: AppDeps, ref: Ref): Promise<Snapshot | null> {
  if (ref.id === null) return null;
  if (isAccessRef(ref)) return await loadAccessSnapshot(deps, ref);
  if (ref.type === NOTIFICATION_CHANNEL) return await loadNotificationChannel(deps, ref.id);
  try {
    if (ref.type === 'node') {
      const row = await deps.db.select().from(nodes).where(eq(nodes.id, ref.id)).get();
      if (!row) return null;
      const { id, name, address, allowInternet, isGateway, gatewayNetwork, enabled, publicKey } = row;
      const { allowTokenNetworks, networksSetBy } = row;
      return {
        view: {
          id,
          name,
          address,
          allowInternet,
          isGateway,
          gatewayNetwork,
          gatewayNetworks: gatewayNetworksOf(row),
          allowTokenNetworks,
          networksSetBy,
          enabled,
          publicKey,
        },
        name,
        nodeId: id,
        domain: null,
      };
    }
    if (ref.type === 'token') {
      const row = await deps.db.select().from(personalAccessTokens).where(eq(personalAccessTokens.id, ref.id)).get();
      if (!row) return null;
      return { view: strip({ ...toToken(row), nodeId: row.nodeId }), name: row.name, nodeId: row.nodeId, domain: null };
    }
    if (ref.type === 'account') {
      const { created_at: _c, updated_at: _u, lastSignInAt: _l, ...view } = await getAccount(deps, ref.id);
      return { view, name: view.username, nodeId: null, domain: null };
    }
    if (ref.type === 'invite') {
      const { created_at: _c, ...view } = await getInvite(deps, ref.id);
      return { view, name: view.username, nodeId: null, domain: null };
    }
    if (ref.type === 'domain') {
      const view = await getDomain(deps, ref.id);
      const owner = await deps.db
        .select({ owner: domains.ownerNodeId })
        .from(domains)
        .where(eq(domains.id, ref.id))
        .get();
      return { view: strip(view), name: view.domain, nodeId: owner?.owner ?? null, domain: view.domain };
    }
    if (ref.nodeId === null) return null;
    const service = await getService(deps, ref.nodeId, ref.type as ServiceType, ref.id);
    return { view: strip(service), name: service.name, nodeId: service.nodeId, domain: service.domain };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  }
}

function actorOf(request: FastifyRequest): AuditActor {
  if (request.agentToken && request.agentNode) {
    return {
      kind: 'node',
      tokenId: request.agentToken.id,
      name: request.agentToken.name,
      nodeId: request.agentNode.id,
    };
  }
  // The person, as the gate read the session with its account: name, id and how the session signed in.
  const { session } = request;
  if (session) return { kind: 'admin', name: session.username, accountId: session.userId, via: session.via };
  return { kind: 'anonymous' };
}

/** A refused change is not recorded, but one the data plane set aside was saved: it is, with the reason. */
function outcomeOf(status: number, error: unknown): { isRecorded: boolean; detail: string | null } {
  if (status < 400) return { isRecorded: true, detail: null };
  if (error instanceof AppError && (error.code === 'dataplane_rejected' || error.code === 'dataplane_unavailable')) {
    return { isRecorded: true, detail: `${error.code}: ${error.message}` };
  }
  return { isRecorded: false, detail: null };
}

/**
 * The target as the change left it. A service change that succeeded answered with the service as read after it
 * committed (or with nothing, having deleted it): that answer is the `after`, not a third read of the same row.
 */
async function loadAfter(deps: AppDeps, ref: Ref, state: AuditState, status: number): Promise<Snapshot | null> {
  if (state.spec.kind !== 'service' || status >= 300) return await load(deps, ref);
  if (status === 204) return null;
  const service = state.answer as AnyService | null;
  if (!service || typeof service !== 'object') return await load(deps, ref);
  return { view: strip(service), name: service.name, nodeId: service.nodeId, domain: service.domain };
}

async function recordChange(deps: AppDeps, request: FastifyRequest, state: AuditState, status: number): Promise<void> {
  const { isRecorded, detail } = outcomeOf(status, state.error);
  if (!isRecorded) return;
  const name = operationOf(request)?.name as OperationName;
  const ref = state.ref ?? refOf(request, name, state.spec.kind, state.createdId);
  const after = ref ? await loadAfter(deps, ref, state, status) : null;
  const about = after ?? state.before;
  const target: AuditTarget | null = ref ? { type: ref.type, id: ref.id, name: about?.name ?? null } : null;
  await deps.audit.record({
    actor: actorOf(request),
    address: request.ip,
    action: state.spec.action,
    target,
    nodeId: about?.nodeId ?? ref?.nodeId ?? null,
    domain: about?.domain ?? null,
    before: state.before?.view ?? null,
    after: after?.view ?? null,
    detail,
  });
}

/**
 * Hooks on the audited operations' routes only: register before the routes (app.ts). A read, which no entry is ever
 * made for, then runs none of them (three hooks on every request were a measurable share of a list's cost:
 * bench/README.md, api-steps.ts).
 */
export function registerOperationAudit(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('audit', null);
  const preHandler = async (request: FastifyRequest): Promise<void> => {
    const name = operationOf(request)?.name;
    const spec = name === undefined ? undefined : audited[name];
    if (!spec || !name) return;
    const isCreate = request.method === 'POST';
    const ref = isCreate ? null : refOf(request, name, spec.kind, null);
    const before = ref ? await load(deps, ref) : null;
    request.audit = { spec, ref, before, createdId: null, error: null, answer: null };
  };
  // The answer before it is serialised: a service's view, kept for the entry's `after` (loadAfter).
  const preSerialization = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (request.audit?.spec.kind === 'service' && reply.statusCode < 300) request.audit.answer = payload;
    return payload;
  };
  const onError = async (request: FastifyRequest, _reply: FastifyReply, error: Error): Promise<void> => {
    if (request.audit) request.audit.error = error;
  };
  // Recorded before the answer leaves (a created row's id is only in the answer): whoever saw the answer finds the
  // entry, on any engine and any gateway.
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    try {
      const created = request.audit?.ref === null && request.method === 'POST' && reply.statusCode < 300;
      if (request.audit && created) {
        // A service's answer was kept as an object (preSerialization); anything else is read back from its text.
        const { answer } = request.audit;
        if (answer !== null && typeof answer === 'object')
          request.audit.createdId = num((answer as { id?: unknown }).id);
        else if (typeof payload === 'string') {
          try {
            request.audit.createdId = num((JSON.parse(payload) as { id?: unknown }).id);
          } catch {
            // Not JSON: nothing to find.
          }
        }
      }
      if (request.audit) await recordChange(deps, request, request.audit, reply.statusCode);
    } catch (error) {
      request.log.error({ err: error }, 'audit log: the entry could not be recorded');
    }
    return payload;
  };
  app.addHook('onRoute', (route) => {
    const name = route.config?.operation?.name;
    if (name === undefined || audited[name] === undefined) return;
    // Route hooks run after the app-wide ones of their kind: last, where these ran as app-wide hooks.
    route.preHandler = [...hooksOf(route.preHandler), preHandler];
    route.preSerialization = [...hooksOf(route.preSerialization), preSerialization];
    route.onError = [...hooksOf(route.onError), onError];
    route.onSend = [...hooksOf(route.onSend), onSend];
  });
}

function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
