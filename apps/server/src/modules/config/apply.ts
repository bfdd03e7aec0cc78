import type { Actor } from '../accounts/policy.js';
import { certificateMessages } from '@postern/contract';
import type {
  ConfigHttpService,
  ConfigNode,
  ConfigPolicy,
  ConfigTcpService,
  DomainAccessUpdate,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { AppError, badRequest } from '../../errors.js';
import type { NodeEvents } from '../../http/events.js';
import { updateDomainAccess, updateServiceAccess } from '../access/policies.js';
import { createIdentityProvider, deleteIdentityProvider, updateIdentityProvider } from '../access/providers.js';
import type { AuditActor } from '../audit/recorder.js';
import { createDomain, deleteDomain, updateDomain, type DomainOptions } from '../domains/service.js';
import { createNode, deleteNode, setNodeEnabled, updateNode } from '../nodes/service.js';
import {
  createHttpService,
  createTcpService,
  deleteService,
  setServiceEnabled,
  updateHttpService,
  updateTcpService,
} from '../services/service.js';
import { createToken, deleteToken, listTokens, revokeToken } from '../tokens/service.js';
import type { Step } from './plan.js';
import type { GatewayState } from './read.js';

// Carries out a plan's steps (plan.ts) with the same service functions the console's calls use, as the operator:
// every rule, check and data-plane apply of those calls holds here too. Each step is its own transaction (a node is
// created with its keys and address, a service with its route, …); the first refused step stops the run and the
// answer says how far it got. A plan computed again after a stop lists exactly what is left, so applying the same
// document again finishes the work. Every step is recorded in the audit log like the call it stands for.

export interface ApplyContext {
  deps: AppDeps;
  events: NodeEvents;
  domainOptions: DomainOptions;
  actor: AuditActor;
  /** The caller's role: a provider that signs accounts in is the owners' to change (access/providers.ts). */
  caller: Actor;
  address: string | null;
}

export interface CreatedToken {
  node: string;
  name: string;
  token: string;
}

export interface ApplyOutcome {
  applied: number;
  tokens: CreatedToken[];
  /** Steps that were stored but that the data plane set aside or could not apply yet. */
  notes: string[];
}

/** The body of a policy change that makes the gateway's policy the document's (a password is never set here). */
function policyBody(policy: ConfigPolicy | null, providerIds: Map<string, number>, hadPassword: boolean) {
  if (policy === null) {
    return {
      mode: 'public' as const,
      providerId: null,
      allowEmails: [],
      allowEmailDomains: [],
      allowGroups: [],
      shareLinks: false,
      bypassPaths: [],
      bypassNetworks: [],
      sessionSeconds: 86_400,
      ...(hadPassword ? { password: null } : {}),
    } satisfies DomainAccessUpdate;
  }
  const { provider, passwordSet, ...fields } = policy;
  return {
    ...fields,
    providerId: provider === null ? null : (providerIds.get(provider) ?? null),
    // Absent keeps the stored password; the document can only ask to keep it or to remove it.
    ...(hadPassword && !passwordSet ? { password: null } : {}),
  } satisfies DomainAccessUpdate;
}

function nodeBody(node: ConfigNode) {
  const networks = node.isGateway ? node.gatewayNetworks : [];
  return {
    name: node.name,
    ...(node.address === null ? {} : { address: node.address }),
    allowInternet: node.allowInternet,
    isGateway: node.isGateway,
    gatewayNetwork: networks[0] ?? null,
    gatewayNetworks: networks,
    allowTokenNetworks: node.isGateway && node.allowTokenNetworks,
  };
}

/** Fields of a service that the edit calls take, only those that differ (an unchanged past expiry is not re-sent). */
function changed<T extends object>(before: T | undefined, after: T, keys: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) {
    if (!before || JSON.stringify(before[key]) !== JSON.stringify(after[key])) out[key] = after[key];
  }
  return out;
}

const HTTP_EDITABLE = [
  'name',
  'backendProto',
  'backendHost',
  'backendPort',
  'allowedIps',
  'blockedIps',
  'expiresAt',
] as const satisfies readonly (keyof ConfigHttpService)[];
const TCP_EDITABLE = [
  'name',
  'ssl',
  'domain',
  'backendHost',
  'backendPort',
  'allowedIps',
  'blockedIps',
  'expiresAt',
] as const satisfies readonly (keyof ConfigTcpService)[];

/** A field absent from an edit keeps its value; a null backend host must not be sent (a regular node ignores it). */
function withoutNullHost<T extends { backendHost?: string | null }>(body: T): T {
  if (body.backendHost !== null) return body;
  const { backendHost: _host, ...rest } = body;
  return rest as T;
}

function describe(step: Step): string {
  switch (step.kind) {
    case 'provider':
      return `identity provider ${'provider' in step ? step.provider.name : step.name}`;
    case 'node':
      return `node ${'node' in step ? step.node.name : step.name}`;
    case 'token':
      return `token ${step.node}/${'token' in step ? step.token.name : step.name}`;
    case 'domain':
      return `domain ${'domain' in step ? step.domain.domain : step.name}`;
    case 'http':
    case 'tcp':
      return `${step.kind === 'http' ? 'HTTP' : 'TCP/UDP'} service ${
        'service' in step
          ? step.kind === 'http'
            ? `${step.service.domain ?? ''}${step.service.path}`
            : `${step.service.proto}/${step.service.port}`
          : step.name
      }`;
  }
}

export async function applySteps(ctx: ApplyContext, state: GatewayState, steps: Step[]): Promise<ApplyOutcome> {
  const { deps } = ctx;
  const nodeCtx = { deps, events: ctx.events };
  const nodeIds = new Map(state.nodeIds);
  const providerIds = new Map(state.providerIds);
  const domainIds = new Map(state.domainIds);
  const outcome: ApplyOutcome = { applied: 0, tokens: [], notes: [] };
  const idOf = (map: Map<string, number>, name: string): number => {
    const id = map.get(name);
    if (id === undefined) throw new AppError('bad_request', `${name} is not on the gateway`);
    return id;
  };
  const record = async (action: string, target: { type: string; id: number | null; name: string }, nodeId?: number) =>
    await deps.audit.record({
      actor: ctx.actor,
      address: ctx.address,
      action,
      target,
      nodeId: nodeId ?? null,
      detail: 'configuration apply',
    });
  /** A step the data plane set aside or could not apply yet was stored: noted, and the run goes on. */
  const tolerateDataPlane = async (what: string, run: () => Promise<unknown>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      if (
        error instanceof AppError &&
        (error.code === 'dataplane_rejected' || error.code === 'dataplane_unavailable')
      ) {
        outcome.notes.push(`${what}: saved, but ${error.message}`);
        return;
      }
      throw error;
    }
  };

  const carryOut = async (step: Step): Promise<void> => {
    const what = describe(step);
    switch (step.kind) {
      case 'provider': {
        if (step.action === 'delete') {
          const id = idOf(providerIds, step.name);
          await deleteIdentityProvider(deps, ctx.caller, id);
          await record('access.provider-delete', { type: 'identity-provider', id, name: step.name });
          return;
        }
        const { name, issuer, clientId, scopes, groupsClaim } = step.provider;
        if (step.action === 'create') {
          const created = await createIdentityProvider(deps, { name, issuer, clientId, scopes, groupsClaim });
          providerIds.set(name, created.id);
          await record('access.provider-create', { type: 'identity-provider', id: created.id, name });
        } else {
          const id = idOf(providerIds, name);
          await tolerateDataPlane(what, () =>
            updateIdentityProvider(deps, ctx.caller, id, { issuer, clientId, scopes, groupsClaim }),
          );
          await record('access.provider-update', { type: 'identity-provider', id, name });
        }
        return;
      }
      case 'node': {
        if (step.action === 'delete') {
          const id = idOf(nodeIds, step.name);
          await tolerateDataPlane(what, () => deleteNode(nodeCtx, id));
          nodeIds.delete(step.name);
          await record('node.delete', { type: 'node', id, name: step.name }, id);
          return;
        }
        const { node } = step;
        if (step.action === 'create') {
          const created = await createNode(nodeCtx, nodeBody(node));
          nodeIds.set(node.name, created.id);
          // Its first token is not the document's: the document's tokens are created by their own steps.
          const first = await listTokens(deps, created.id, { page: 1, limit: 100 });
          for (const token of first.data) await deleteToken(deps, created.id, token.id);
          await record('node.create', { type: 'node', id: created.id, name: node.name }, created.id);
          if (!node.enabled) await tolerateDataPlane(what, () => setNodeEnabled(nodeCtx, created.id, false));
          return;
        }
        const id = idOf(nodeIds, node.name);
        const before = state.document.nodes.find((have) => have.name === node.name);
        await tolerateDataPlane(what, () => updateNode(nodeCtx, id, nodeBody(node)));
        if (before?.enabled !== node.enabled)
          await tolerateDataPlane(what, () => setNodeEnabled(nodeCtx, id, node.enabled));
        await record('node.update', { type: 'node', id, name: node.name }, id);
        return;
      }
      case 'token': {
        const nodeId = idOf(nodeIds, step.node);
        if (step.action === 'create') {
          const created = await createToken(deps, nodeId, {
            name: step.token.name,
            ...(step.token.expireAt === null ? {} : { expireAt: step.token.expireAt }),
          });
          outcome.tokens.push({ node: step.node, name: created.name, token: created.token });
          await record('token.create', { type: 'token', id: created.id, name: created.name }, nodeId);
        } else if (step.action === 'revoke') {
          await revokeToken(deps, nodeId, step.id);
          await record('token.revoke', { type: 'token', id: step.id, name: step.name }, nodeId);
        } else {
          await deleteToken(deps, nodeId, step.id);
          await record('token.delete', { type: 'token', id: step.id, name: step.name }, nodeId);
        }
        return;
      }
      case 'domain': {
        if (step.action === 'delete') {
          const id = idOf(domainIds, step.name);
          await tolerateDataPlane(what, () => deleteDomain(deps, id));
          await record('domain.delete', { type: 'domain', id, name: step.name });
          return;
        }
        const { domain } = step;
        const ownerNodeId = domain.owner === null ? null : idOf(nodeIds, domain.owner);
        const before = state.document.domains.find((have) => have.domain === domain.domain);
        let id = domainIds.get(domain.domain);
        if (id === undefined) {
          if (domain.ssl === 'uploaded') throw badRequest(certificateMessages.uploadFirst);
          const created = await createDomain(
            deps,
            { domain: domain.domain, ssl: domain.ssl, ownerNodeId },
            ctx.domainOptions,
          );
          id = created.id;
          domainIds.set(domain.domain, id);
          await record('domain.create', { type: 'domain', id, name: domain.domain });
        } else if (before?.ssl !== domain.ssl || before.owner !== domain.owner) {
          const domainId = id;
          await tolerateDataPlane(what, () =>
            updateDomain(deps, domainId, { ssl: domain.ssl, ownerNodeId }, ctx.domainOptions),
          );
          await record('domain.update', { type: 'domain', id, name: domain.domain });
        }
        if (JSON.stringify(before?.access ?? null) !== JSON.stringify(domain.access)) {
          const domainId = id;
          await tolerateDataPlane(what, () =>
            updateDomainAccess(deps, domainId, policyBody(domain.access, providerIds, step.passwordSet)),
          );
          await record('access.policy-update', { type: 'domain', id, name: domain.domain });
        }
        return;
      }
      case 'http':
      case 'tcp': {
        const nodeId = idOf(nodeIds, step.node);
        if (step.action === 'delete') {
          await tolerateDataPlane(what, () => deleteService(deps, nodeId, step.kind, step.id, 'admin'));
          await record('service.delete', { type: step.kind, id: step.id, name: step.name }, nodeId);
          return;
        }
        if (step.kind === 'http') await carryOutHttp(step, nodeId, what);
        else await carryOutTcp(step, nodeId, what);
        return;
      }
    }
  };

  const carryOutHttp = async (
    step: Extract<Step, { kind: 'http'; action: 'create' | 'update' }>,
    nodeId: number,
    what: string,
  ): Promise<void> => {
    const { service } = step;
    const hasOwnPolicy = service.access !== null;
    let id: number;
    let before: ConfigHttpService | undefined;
    if (step.action === 'create') {
      // Created disabled when it gets a policy of its own: never served under its domain's alone in between.
      const created = await createHttpService(
        deps,
        nodeId,
        withoutNullHost({
          name: service.name,
          domain: service.domain,
          pathLocation: service.path,
          backendProto: service.backendProto,
          backendHost: service.backendHost,
          backendPort: service.backendPort,
          allowedIps: service.allowedIps,
          blockedIps: service.blockedIps,
          expiresAt: service.expiresAt,
          enabled: service.enabled && !hasOwnPolicy,
        }),
        'admin',
      );
      id = created.id;
      await record('service.create', { type: 'http', id, name: service.name }, nodeId);
    } else {
      id = step.id;
      before = state.http.get(`${service.domain ?? ''}${service.path}`)?.service;
      const edit = withoutNullHost(changed(before, service, HTTP_EDITABLE));
      if (Object.keys(edit).length > 0) {
        const serviceId = id;
        await tolerateDataPlane(what, () => updateHttpService(deps, nodeId, serviceId, edit));
        await record('service.update', { type: 'http', id, name: service.name }, nodeId);
      }
    }
    const serviceId = id;
    if (JSON.stringify(before?.access ?? null) !== JSON.stringify(service.access)) {
      const body =
        service.access === null
          ? ({ mode: 'inherit' } as const)
          : policyBody(service.access, providerIds, step.action === 'update' && step.passwordSet);
      await tolerateDataPlane(what, () => updateServiceAccess(deps, nodeId, serviceId, body, 'admin'));
      await record('access.policy-update', { type: 'http', id, name: service.name }, nodeId);
    }
    const isEnabled = step.action === 'create' ? service.enabled && !hasOwnPolicy : before?.enabled;
    if (isEnabled !== service.enabled)
      await tolerateDataPlane(what, () => setServiceEnabled(deps, nodeId, 'http', serviceId, service.enabled, 'admin'));
  };

  const carryOutTcp = async (
    step: Extract<Step, { kind: 'tcp'; action: 'create' | 'update' }>,
    nodeId: number,
    what: string,
  ): Promise<void> => {
    const { service } = step;
    let id: number;
    let isEnabled: boolean | undefined = service.enabled;
    if (step.action === 'create') {
      const created = await createTcpService(
        deps,
        nodeId,
        withoutNullHost({
          name: service.name,
          proto: service.proto,
          port: service.port,
          ssl: service.ssl,
          domain: service.domain,
          backendHost: service.backendHost,
          backendPort: service.backendPort,
          allowedIps: service.allowedIps,
          blockedIps: service.blockedIps,
          expiresAt: service.expiresAt,
          enabled: service.enabled,
        }),
        'admin',
      );
      id = created.id;
      await record('service.create', { type: 'tcp', id, name: service.name }, nodeId);
    } else {
      id = step.id;
      const before = state.tcp.get(`${service.proto}/${service.port}`)?.service;
      isEnabled = before?.enabled;
      const edit = withoutNullHost(changed(before, service, TCP_EDITABLE));
      if (Object.keys(edit).length > 0) {
        const serviceId = id;
        await tolerateDataPlane(what, () => updateTcpService(deps, nodeId, serviceId, edit));
        await record('service.update', { type: 'tcp', id, name: service.name }, nodeId);
      }
    }
    const serviceId = id;
    if (isEnabled !== service.enabled)
      await tolerateDataPlane(what, () => setServiceEnabled(deps, nodeId, 'tcp', serviceId, service.enabled, 'admin'));
  };

  for (const step of steps) {
    try {
      await carryOut(step);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new AppError(
        error.code,
        `Applied ${outcome.applied} of ${steps.length} steps; ${describe(step)} was refused: ${error.message}${
          error.fields.length > 0
            ? ` (${error.fields.map((field) => `${field.field}: ${field.message}`).join('; ')})`
            : ''
        }`,
        error.fields,
        error.headers,
      );
    }
    outcome.applied += 1;
  }
  return outcome;
}
