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

/** One run of a plan's steps: the ids of what it made so far, what it will answer, and one method per kind of step. */
class StepRunner {
  readonly outcome: ApplyOutcome = { applied: 0, tokens: [], notes: [] };
  private readonly deps: AppDeps;
  private readonly nodeCtx: { deps: AppDeps; events: NodeEvents };
  private readonly nodeIds: Map<string, number>;
  private readonly providerIds: Map<string, number>;
  private readonly domainIds: Map<string, number>;

  constructor(
    private readonly ctx: ApplyContext,
    private readonly state: GatewayState,
  ) {
    this.deps = ctx.deps;
    this.nodeCtx = { deps: ctx.deps, events: ctx.events };
    this.nodeIds = new Map(state.nodeIds);
    this.providerIds = new Map(state.providerIds);
    this.domainIds = new Map(state.domainIds);
  }

  async carryOut(step: Step): Promise<void> {
    const what = describe(step);
    switch (step.kind) {
      case 'provider':
        return this.provider(step, what);
      case 'node':
        return this.node(step, what);
      case 'token':
        return this.token(step);
      case 'domain':
        return this.domain(step, what);
      case 'http':
      case 'tcp':
        return this.service(step, what);
    }
  }

  private idOf(map: Map<string, number>, name: string): number {
    const id = map.get(name);
    if (id === undefined) throw new AppError('bad_request', `${name} is not on the gateway`);
    return id;
  }

  private async record(action: string, target: { type: string; id: number | null; name: string }, nodeId?: number) {
    await this.deps.audit.record({
      actor: this.ctx.actor,
      address: this.ctx.address,
      action,
      target,
      nodeId: nodeId ?? null,
      detail: 'configuration apply',
    });
  }

  /** A step the data plane set aside or could not apply yet was stored: noted, and the run goes on. */
  private async tolerateDataPlane(what: string, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (error) {
      if (
        error instanceof AppError &&
        (error.code === 'dataplane_rejected' || error.code === 'dataplane_unavailable')
      ) {
        this.outcome.notes.push(`${what}: saved, but ${error.message}`);
        return;
      }
      throw error;
    }
  }

  /** An identity provider created, updated or deleted. */
  private async provider(step: Extract<Step, { kind: 'provider' }>, what: string): Promise<void> {
    if (step.action === 'delete') {
      const id = this.idOf(this.providerIds, step.name);
      await deleteIdentityProvider(this.deps, this.ctx.caller, id);
      await this.record('access.provider-delete', { type: 'identity-provider', id, name: step.name });
      return;
    }
    const { name, issuer, clientId, scopes, groupsClaim } = step.provider;
    if (step.action === 'create') {
      const created = await createIdentityProvider(this.deps, { name, issuer, clientId, scopes, groupsClaim });
      this.providerIds.set(name, created.id);
      await this.record('access.provider-create', { type: 'identity-provider', id: created.id, name });
    } else {
      const id = this.idOf(this.providerIds, name);
      await this.tolerateDataPlane(what, () =>
        updateIdentityProvider(this.deps, this.ctx.caller, id, { issuer, clientId, scopes, groupsClaim }),
      );
      await this.record('access.provider-update', { type: 'identity-provider', id, name });
    }
  }

  /** A node created (without the first token a new node gets), updated or deleted. */
  private async node(step: Extract<Step, { kind: 'node' }>, what: string): Promise<void> {
    if (step.action === 'delete') {
      const id = this.idOf(this.nodeIds, step.name);
      await this.tolerateDataPlane(what, () => deleteNode(this.nodeCtx, id));
      this.nodeIds.delete(step.name);
      await this.record('node.delete', { type: 'node', id, name: step.name }, id);
      return;
    }
    const { node } = step;
    if (step.action === 'create') {
      const created = await createNode(this.nodeCtx, nodeBody(node));
      this.nodeIds.set(node.name, created.id);
      // Its first token is not the document's: the document's tokens are created by their own steps.
      const first = await listTokens(this.deps, created.id, { page: 1, limit: 100 });
      for (const token of first.data) await deleteToken(this.deps, created.id, token.id);
      await this.record('node.create', { type: 'node', id: created.id, name: node.name }, created.id);
      if (!node.enabled) await this.tolerateDataPlane(what, () => setNodeEnabled(this.nodeCtx, created.id, false));
      return;
    }
    const id = this.idOf(this.nodeIds, node.name);
    const before = this.state.document.nodes.find((have) => have.name === node.name);
    await this.tolerateDataPlane(what, () => updateNode(this.nodeCtx, id, nodeBody(node)));
    if (before?.enabled !== node.enabled)
      await this.tolerateDataPlane(what, () => setNodeEnabled(this.nodeCtx, id, node.enabled));
    await this.record('node.update', { type: 'node', id, name: node.name }, id);
  }

  /** A node's token created (its secret goes into the answer once), revoked or deleted. */
  private async token(step: Extract<Step, { kind: 'token' }>): Promise<void> {
    const nodeId = this.idOf(this.nodeIds, step.node);
    if (step.action === 'create') {
      const created = await createToken(this.deps, nodeId, {
        name: step.token.name,
        ...(step.token.expireAt === null ? {} : { expireAt: step.token.expireAt }),
      });
      this.outcome.tokens.push({ node: step.node, name: created.name, token: created.token });
      await this.record('token.create', { type: 'token', id: created.id, name: created.name }, nodeId);
    } else if (step.action === 'revoke') {
      await revokeToken(this.deps, nodeId, step.id);
      await this.record('token.revoke', { type: 'token', id: step.id, name: step.name }, nodeId);
    } else {
      await deleteToken(this.deps, nodeId, step.id);
      await this.record('token.delete', { type: 'token', id: step.id, name: step.name }, nodeId);
    }
  }

  /** A domain created, updated or deleted, and its access policy. */
  private async domain(step: Extract<Step, { kind: 'domain' }>, what: string): Promise<void> {
    if (step.action === 'delete') {
      const id = this.idOf(this.domainIds, step.name);
      await this.tolerateDataPlane(what, () => deleteDomain(this.deps, id));
      await this.record('domain.delete', { type: 'domain', id, name: step.name });
      return;
    }
    const { domain } = step;
    const ownerNodeId = domain.owner === null ? null : this.idOf(this.nodeIds, domain.owner);
    const before = this.state.document.domains.find((have) => have.domain === domain.domain);
    let id = this.domainIds.get(domain.domain);
    if (id === undefined) {
      if (domain.ssl === 'uploaded') throw badRequest(certificateMessages.uploadFirst);
      const created = await createDomain(
        this.deps,
        { domain: domain.domain, ssl: domain.ssl, ownerNodeId },
        this.ctx.domainOptions,
      );
      id = created.id;
      this.domainIds.set(domain.domain, id);
      await this.record('domain.create', { type: 'domain', id, name: domain.domain });
    } else if (before?.ssl !== domain.ssl || before.owner !== domain.owner) {
      const domainId = id;
      await this.tolerateDataPlane(what, () =>
        updateDomain(this.deps, domainId, { ssl: domain.ssl, ownerNodeId }, this.ctx.domainOptions),
      );
      await this.record('domain.update', { type: 'domain', id, name: domain.domain });
    }
    if (JSON.stringify(before?.access ?? null) !== JSON.stringify(domain.access)) {
      const domainId = id;
      await this.tolerateDataPlane(what, () =>
        updateDomainAccess(this.deps, domainId, policyBody(domain.access, this.providerIds, step.passwordSet)),
      );
      await this.record('access.policy-update', { type: 'domain', id, name: domain.domain });
    }
  }

  /** An HTTP or TCP/UDP service deleted, or handed to the create-or-update of its kind. */
  private async service(step: Extract<Step, { kind: 'http' | 'tcp' }>, what: string): Promise<void> {
    const nodeId = this.idOf(this.nodeIds, step.node);
    if (step.action === 'delete') {
      await this.tolerateDataPlane(what, () => deleteService(this.deps, nodeId, step.kind, step.id, 'admin'));
      await this.record('service.delete', { type: step.kind, id: step.id, name: step.name }, nodeId);
      return;
    }
    if (step.kind === 'http') await this.http(step, nodeId, what);
    else await this.tcp(step, nodeId, what);
  }

  /** An HTTP service created or updated, then its own access policy and whether it is enabled. */
  private async http(
    step: Extract<Step, { kind: 'http'; action: 'create' | 'update' }>,
    nodeId: number,
    what: string,
  ): Promise<void> {
    const { service } = step;
    const hasOwnPolicy = service.access !== null;
    let id: number;
    let before: ConfigHttpService | undefined;
    if (step.action === 'create') {
      // Created disabled when it gets a policy of its own: never served under its domain's alone in between.
      const created = await createHttpService(
        this.deps,
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
      await this.record('service.create', { type: 'http', id, name: service.name }, nodeId);
    } else {
      id = step.id;
      before = this.state.http.get(`${service.domain ?? ''}${service.path}`)?.service;
      const edit = withoutNullHost(changed(before, service, HTTP_EDITABLE));
      if (Object.keys(edit).length > 0) {
        const serviceId = id;
        await this.tolerateDataPlane(what, () => updateHttpService(this.deps, nodeId, serviceId, edit));
        await this.record('service.update', { type: 'http', id, name: service.name }, nodeId);
      }
    }
    const serviceId = id;
    if (JSON.stringify(before?.access ?? null) !== JSON.stringify(service.access)) {
      const body =
        service.access === null
          ? ({ mode: 'inherit' } as const)
          : policyBody(service.access, this.providerIds, step.action === 'update' && step.passwordSet);
      await this.tolerateDataPlane(what, () => updateServiceAccess(this.deps, nodeId, serviceId, body, 'admin'));
      await this.record('access.policy-update', { type: 'http', id, name: service.name }, nodeId);
    }
    const isEnabled = step.action === 'create' ? service.enabled && !hasOwnPolicy : before?.enabled;
    if (isEnabled !== service.enabled)
      await this.tolerateDataPlane(what, () =>
        setServiceEnabled(this.deps, nodeId, 'http', serviceId, service.enabled, 'admin'),
      );
  }

  /** A TCP/UDP service created or updated, then whether it is enabled. */
  private async tcp(
    step: Extract<Step, { kind: 'tcp'; action: 'create' | 'update' }>,
    nodeId: number,
    what: string,
  ): Promise<void> {
    const { service } = step;
    let id: number;
    let isEnabled: boolean | undefined = service.enabled;
    if (step.action === 'create') {
      const created = await createTcpService(
        this.deps,
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
      await this.record('service.create', { type: 'tcp', id, name: service.name }, nodeId);
    } else {
      id = step.id;
      const before = this.state.tcp.get(`${service.proto}/${service.port}`)?.service;
      isEnabled = before?.enabled;
      const edit = withoutNullHost(changed(before, service, TCP_EDITABLE));
      if (Object.keys(edit).length > 0) {
        const serviceId = id;
        await this.tolerateDataPlane(what, () => updateTcpService(this.deps, nodeId, serviceId, edit));
        await this.record('service.update', { type: 'tcp', id, name: service.name }, nodeId);
      }
    }
    const serviceId = id;
    if (isEnabled !== service.enabled)
      await this.tolerateDataPlane(what, () =>
        setServiceEnabled(this.deps, nodeId, 'tcp', serviceId, service.enabled, 'admin'),
      );
  }
}

export async function applySteps(ctx: ApplyContext, state: GatewayState, steps: Step[]): Promise<ApplyOutcome> {
  const runner = new StepRunner(ctx, state);
  const { outcome } = runner;
  for (const step of steps) {
    try {
      await runner.carryOut(step);
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
