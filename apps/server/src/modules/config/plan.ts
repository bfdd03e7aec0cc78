import {
  DomainAccessUpdateSchema,
  IdentityProviderCreateSchema,
  normalizePathLocation,
  type ConfigChange,
  type ConfigDocument,
  type ConfigDomain,
  type ConfigHttpService,
  type ConfigIdentityProvider,
  type ConfigNode,
  type ConfigPlan,
  type ConfigPolicy,
  type ConfigProblem,
  type ConfigTcpService,
  type ConfigToken,
} from '@postern/contract';
import { httpKey, isDefaultPolicy, tcpKey, type GatewayState } from './read.js';

// What applying a configuration document to the gateway takes: the changes a person reads (per object, with the
// fields that differ) and the steps the executor carries out (apply.ts), in an order that works: identity
// providers, nodes, tokens, domains (with their policies) before the services on them; services a document no
// longer names (or moves) are deleted before new ones take their routes; what --prune removes goes last. A pure
// function of the gateway's state and the document: planning twice gives the same plan, and a plan right after
// an apply is empty.

export type Step =
  | { kind: 'provider'; action: 'create' | 'update'; provider: ConfigIdentityProvider }
  | { kind: 'provider'; action: 'delete'; name: string }
  | { kind: 'node'; action: 'create' | 'update'; node: ConfigNode }
  | { kind: 'node'; action: 'delete'; name: string }
  | { kind: 'token'; action: 'create'; node: string; token: ConfigToken }
  | { kind: 'token'; action: 'revoke' | 'delete'; node: string; name: string; id: number }
  | { kind: 'domain'; action: 'create' | 'update'; domain: ConfigDomain; passwordSet: boolean }
  | { kind: 'domain'; action: 'delete'; name: string }
  | { kind: 'http'; action: 'create'; node: string; service: ConfigHttpService }
  | { kind: 'http'; action: 'update'; node: string; id: number; service: ConfigHttpService; passwordSet: boolean }
  | { kind: 'tcp'; action: 'create'; node: string; service: ConfigTcpService }
  | { kind: 'tcp'; action: 'update'; node: string; id: number; service: ConfigTcpService }
  | { kind: 'http' | 'tcp'; action: 'delete'; node: string; name: string; id: number };

export interface PlanResult {
  plan: ConfigPlan;
  steps: Step[];
}

type Fields = ConfigChange['fields'];

/** The fields of `before` and `after` that differ (compared as JSON), one entry each. */
function diff<T extends object>(before: T, after: T, prefix = ''): Fields {
  const fields: Fields = [];
  for (const key of Object.keys(after) as (keyof T & string)[]) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      fields.push({ field: `${prefix}${key}`, before: before[key], after: after[key] });
  }
  return fields;
}

/** A policy's differences, field by field; null on either side is a whole change. */
function policyDiff(before: ConfigPolicy | null, after: ConfigPolicy | null, field: string): Fields {
  if (before === null || after === null) {
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ field, before, after }];
  }
  return diff(before, after, `${field}.`);
}

interface Context {
  state: GatewayState;
  desired: ConfigDocument;
  prune: boolean;
  now: Date;
  changes: ConfigChange[];
  errors: ConfigProblem[];
  notes: string[];
}

/**
 * A document's policy as the gateway would store it (emails lower-cased, lists without repeats, paths in their
 * canonical form), so a hand-written list compares equal once applied. `passwordSet` cannot be made true by a
 * document: it counts only where the gateway has a password already.
 */
function normalisePolicy(
  ctx: Context,
  policy: ConfigPolicy | null,
  current: ConfigPolicy | null,
  path: string,
): ConfigPolicy | null {
  if (policy === null) return null;
  const { provider: _provider, passwordSet, mode, ...fields } = policy;
  const parsed = DomainAccessUpdateSchema.safeParse({ mode, ...fields });
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      ctx.errors.push({ path: [path, ...issue.path.map(String)].join('.'), message: issue.message });
    return policy;
  }
  if (policy.provider !== null && !hasProvider(ctx, policy.provider))
    ctx.errors.push({ path: `${path}.provider`, message: `No identity provider is named ${policy.provider}` });
  const hasPassword = current?.passwordSet === true;
  if (passwordSet && !hasPassword)
    ctx.notes.push(
      `${path}: a password cannot come from a document; set it in the console (or with the API), the rest applies now`,
    );
  const value = parsed.data;
  return {
    mode: value.mode ?? mode,
    provider: policy.provider,
    allowEmails: value.allowEmails ?? [],
    allowEmailDomains: value.allowEmailDomains ?? [],
    allowGroups: value.allowGroups ?? [],
    passwordSet: passwordSet && hasPassword,
    shareLinks: value.shareLinks ?? false,
    bypassPaths: value.bypassPaths ?? [],
    bypassNetworks: value.bypassNetworks ?? [],
    sessionSeconds: value.sessionSeconds ?? policy.sessionSeconds,
  };
}

const hasProvider = (ctx: Context, name: string): boolean =>
  ctx.desired.identityProviders.some((provider) => provider.name === name) ||
  (!ctx.prune && ctx.state.providerIds.has(name));

function duplicates(names: string[]): string[] {
  const seen = new Set<string>();
  return [...new Set(names.filter((name) => seen.has(name) || !seen.add(name)))];
}

function planProviders(ctx: Context, steps: Step[], prunes: Step[]): void {
  const current = new Map(ctx.state.document.identityProviders.map((provider) => [provider.name, provider]));
  for (const name of duplicates(ctx.desired.identityProviders.map((provider) => provider.name)))
    ctx.errors.push({ path: 'identityProviders', message: `Two identity providers are named ${name}` });
  ctx.desired.identityProviders.forEach((wanted, i) => {
    const parsed = IdentityProviderCreateSchema.safeParse({
      name: wanted.name,
      issuer: wanted.issuer,
      clientId: wanted.clientId,
      scopes: wanted.scopes,
      groupsClaim: wanted.groupsClaim,
    });
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.errors.push({
          path: [`identityProviders.${i}`, ...issue.path.map(String)].join('.'),
          message: issue.message,
        });
      return;
    }
    const have = current.get(wanted.name);
    const provider: ConfigIdentityProvider = {
      name: parsed.data.name,
      issuer: parsed.data.issuer,
      clientId: parsed.data.clientId,
      clientSecretSet: have?.clientSecretSet ?? false,
      scopes: [...new Set(['openid', ...(parsed.data.scopes ?? wanted.scopes)])],
      groupsClaim: parsed.data.groupsClaim ?? wanted.groupsClaim,
    };
    if (wanted.clientSecretSet && have?.clientSecretSet !== true)
      ctx.notes.push(
        `identity provider ${wanted.name}: a client secret cannot come from a document; set it in the console`,
      );
    if (!have) {
      ctx.changes.push({ action: 'create', kind: 'identityProvider', name: wanted.name, fields: [] });
      steps.push({ kind: 'provider', action: 'create', provider });
      return;
    }
    const fields = diff(have, provider);
    if (fields.length === 0) return;
    ctx.changes.push({ action: 'update', kind: 'identityProvider', name: wanted.name, fields });
    steps.push({ kind: 'provider', action: 'update', provider });
  });
  if (!ctx.prune) return;
  for (const name of current.keys()) {
    if (ctx.desired.identityProviders.some((provider) => provider.name === name)) continue;
    ctx.changes.push({ action: 'delete', kind: 'identityProvider', name, fields: [] });
    prunes.push({ kind: 'provider', action: 'delete', name });
  }
}

/** The node's own fields (not its tokens or services), for comparing. */
function nodeFields(node: ConfigNode) {
  const { tokens: _tokens, http: _http, tcp: _tcp, local: _local, ...fields } = node;
  return fields;
}

function planNodes(ctx: Context, steps: Step[], prunes: Step[]): void {
  const current = new Map(ctx.state.document.nodes.map((node) => [node.name, node]));
  for (const name of duplicates(ctx.desired.nodes.map((node) => node.name)))
    ctx.errors.push({ path: 'nodes', message: `Two nodes are named ${name}: names identify nodes in the document` });
  for (const name of ctx.state.duplicateNodeNames)
    if (ctx.desired.nodes.some((node) => node.name === name) || ctx.prune)
      ctx.errors.push({
        path: 'nodes',
        message: `The gateway has several nodes named ${name}: rename them in the console (names identify nodes)`,
      });
  if (ctx.desired.nodes.filter((node) => node.local).length > 1)
    ctx.errors.push({ path: 'nodes', message: 'Only one node can be the local one' });

  for (const wanted of ctx.desired.nodes) {
    if (wanted.local) continue;
    const have = current.get(wanted.name);
    if (have?.local === true) {
      ctx.errors.push({ path: 'nodes', message: `${wanted.name} is the gateway's local node: mark it "local: true"` });
      continue;
    }
    if (!have) {
      ctx.changes.push({ action: 'create', kind: 'node', name: wanted.name, fields: [] });
      steps.push({ kind: 'node', action: 'create', node: wanted });
      continue;
    }
    // No address in the document: whatever the gateway chose stays.
    const target = { ...wanted, address: wanted.address ?? have.address };
    const fields = diff(nodeFields(have), nodeFields(target));
    if (fields.length === 0) continue;
    ctx.changes.push({ action: 'update', kind: 'node', name: wanted.name, fields });
    steps.push({ kind: 'node', action: 'update', node: target });
  }
  if (!ctx.prune) return;
  for (const node of current.values()) {
    if (node.local || ctx.desired.nodes.some((wanted) => wanted.name === node.name)) continue;
    ctx.changes.push({ action: 'delete', kind: 'node', name: node.name, fields: [] });
    prunes.push({ kind: 'node', action: 'delete', name: node.name });
  }
}

function planTokens(ctx: Context, steps: Step[], prunes: Step[]): void {
  for (const wanted of ctx.desired.nodes) {
    if (wanted.local) {
      if (wanted.tokens.length > 0)
        ctx.errors.push({ path: `nodes.${wanted.name}.tokens`, message: 'The local node has no access tokens' });
      continue;
    }
    // Tokens of the same name are matched in order; what is left over is created or (with --prune) deleted.
    const left = [...(ctx.state.tokens.get(wanted.name) ?? [])];
    for (const token of wanted.tokens) {
      const name = `${wanted.name}/${token.name}`;
      const index = left.findIndex((have) => have.name === token.name);
      const have = index < 0 ? undefined : left.splice(index, 1)[0];
      if (!have) {
        if (token.expireAt !== null && Date.parse(token.expireAt) <= ctx.now.getTime()) {
          ctx.notes.push(`token ${name}: expired, so not created`);
          continue;
        }
        if (token.revoked) {
          ctx.notes.push(`token ${name}: revoked, so not created`);
          continue;
        }
        ctx.changes.push({ action: 'create', kind: 'token', name, fields: [] });
        steps.push({ kind: 'token', action: 'create', node: wanted.name, token });
        continue;
      }
      if (have.expireAt !== token.expireAt)
        ctx.errors.push({
          path: `nodes.${wanted.name}.tokens.${token.name}.expireAt`,
          message: "A token's expiry cannot change: revoke it and name a new one",
        });
      if (have.revoked && !token.revoked)
        ctx.errors.push({
          path: `nodes.${wanted.name}.tokens.${token.name}.revoked`,
          message: 'A revoked token cannot be used again: name a new one',
        });
      if (!have.revoked && token.revoked) {
        ctx.changes.push({
          action: 'update',
          kind: 'token',
          name,
          fields: [{ field: 'revoked', before: false, after: true }],
        });
        steps.push({ kind: 'token', action: 'revoke', node: wanted.name, name: token.name, id: have.id });
      }
    }
    if (!ctx.prune) continue;
    for (const have of left) {
      ctx.changes.push({ action: 'delete', kind: 'token', name: `${wanted.name}/${have.name}`, fields: [] });
      prunes.push({ kind: 'token', action: 'delete', node: wanted.name, name: have.name, id: have.id });
    }
  }
}

/** Whether a node of this name exists once the document is applied. */
function isNode(ctx: Context, name: string): boolean {
  return (
    ctx.desired.nodes.some((node) => node.name === name) ||
    (!ctx.prune && ctx.state.document.nodes.some((node) => node.name === name))
  );
}

function planDomains(ctx: Context, steps: Step[], prunes: Step[]): void {
  const current = new Map(ctx.state.document.domains.map((domain) => [domain.domain, domain]));
  for (const name of duplicates(ctx.desired.domains.map((domain) => domain.domain)))
    ctx.errors.push({ path: 'domains', message: `The domain ${name} is named twice` });
  const localName = ctx.state.localNode?.name;
  ctx.desired.domains.forEach((wanted, i) => {
    const path = `domains.${i}`;
    if (wanted.owner !== null && (!isNode(ctx, wanted.owner) || wanted.owner === localName))
      ctx.errors.push({
        path: `${path}.owner`,
        message: wanted.owner === localName ? 'The local node cannot own domains' : `No node is named ${wanted.owner}`,
      });
    const have = current.get(wanted.domain);
    const access = normalisePolicy(ctx, wanted.access, have?.access ?? null, `${path}.access`);
    const target = { ...wanted, access: isDefaultPolicy(access) ? null : access };
    const passwordSet = have?.access?.passwordSet === true;
    if (!have) {
      ctx.changes.push({ action: 'create', kind: 'domain', name: wanted.domain, fields: [] });
      steps.push({ kind: 'domain', action: 'create', domain: target, passwordSet });
      return;
    }
    const fields = [
      ...diff({ ...have, access: null }, { ...target, access: null }),
      ...policyDiff(have.access, target.access, 'access'),
    ];
    if (fields.length === 0) return;
    ctx.changes.push({ action: 'update', kind: 'domain', name: wanted.domain, fields });
    steps.push({ kind: 'domain', action: 'update', domain: target, passwordSet });
  });
  if (!ctx.prune) return;
  const labelledDomains = new Set([...ctx.state.labelledHttp.keys()].map((key) => key.slice(0, key.indexOf('/'))));
  for (const name of current.keys()) {
    if (ctx.desired.domains.some((domain) => domain.domain === name)) continue;
    if (labelledDomains.has(name)) {
      ctx.notes.push(`domain ${name}: kept, a service published by Docker labels uses it`);
      continue;
    }
    ctx.changes.push({ action: 'delete', kind: 'domain', name, fields: [] });
    prunes.push({ kind: 'domain', action: 'delete', name });
  }
}

/** Services, keyed by route (HTTP) or public port (TCP/UDP), wherever the document puts them. */
function planServices(ctx: Context, removals: Step[], steps: Step[]): void {
  const seenHttp = new Set<string>();
  const seenTcp = new Set<string>();
  const localName = ctx.state.localNode?.name;
  for (const node of ctx.desired.nodes) {
    const nodeName = node.local ? (localName ?? node.name) : node.name;
    const choosesHost = node.local || node.isGateway;
    node.http.forEach((wanted, i) => {
      const path = `nodes.${node.name}.http.${i}`;
      const service = {
        ...wanted,
        path: normalizePathLocation(wanted.path),
        backendHost: choosesHost ? wanted.backendHost : null,
      };
      const key = httpKey(service.domain, service.path);
      const name = key;
      if (seenHttp.has(key)) ctx.errors.push({ path, message: `Two services are on ${key}` });
      seenHttp.add(key);
      const labelled = ctx.state.labelledHttp.get(key);
      if (labelled) {
        ctx.errors.push({
          path,
          message: `${key} is published by the Docker labels of container ${labelled.container} on node ${labelled.node}: change the labels instead`,
        });
        return;
      }
      if (choosesHost && service.backendHost === null)
        ctx.errors.push({
          path: `${path}.backendHost`,
          message: 'A gateway node or the local node needs a backendHost',
        });
      const have = ctx.state.http.get(key);
      service.access = normalisePolicy(ctx, service.access, have?.service.access ?? null, `${path}.access`);
      if (!have || have.node !== nodeName) {
        if (have) {
          ctx.changes.push({
            action: 'update',
            kind: 'httpService',
            name,
            fields: [{ field: 'node', before: have.node, after: nodeName }],
          });
          removals.push({ kind: 'http', action: 'delete', node: have.node, name, id: have.id });
        } else {
          ctx.changes.push({ action: 'create', kind: 'httpService', name, fields: [] });
        }
        steps.push({ kind: 'http', action: 'create', node: nodeName, service });
        return;
      }
      const { access: _before, ...haveFields } = have.service;
      const { access: _after, ...wantFields } = service;
      const fields = [...diff(haveFields, wantFields), ...policyDiff(have.service.access, service.access, 'access')];
      if (fields.length === 0) return;
      ctx.changes.push({ action: 'update', kind: 'httpService', name, fields });
      steps.push({
        kind: 'http',
        action: 'update',
        node: nodeName,
        id: have.id,
        service,
        passwordSet: have.service.access?.passwordSet === true,
      });
    });
    node.tcp.forEach((wanted, i) => {
      const path = `nodes.${node.name}.tcp.${i}`;
      const service = { ...wanted, backendHost: choosesHost ? wanted.backendHost : null };
      const key = tcpKey(service.proto, service.port);
      if (seenTcp.has(key)) ctx.errors.push({ path, message: `Two services are on ${key}` });
      seenTcp.add(key);
      const labelled = ctx.state.labelledTcp.get(key);
      if (labelled) {
        ctx.errors.push({
          path,
          message: `${key} is published by the Docker labels of container ${labelled.container} on node ${labelled.node}: change the labels instead`,
        });
        return;
      }
      if (choosesHost && service.backendHost === null)
        ctx.errors.push({
          path: `${path}.backendHost`,
          message: 'A gateway node or the local node needs a backendHost',
        });
      const have = ctx.state.tcp.get(key);
      if (!have || have.node !== nodeName) {
        if (have) {
          ctx.changes.push({
            action: 'update',
            kind: 'tcpService',
            name: key,
            fields: [{ field: 'node', before: have.node, after: nodeName }],
          });
          removals.push({ kind: 'tcp', action: 'delete', node: have.node, name: key, id: have.id });
        } else {
          ctx.changes.push({ action: 'create', kind: 'tcpService', name: key, fields: [] });
        }
        steps.push({ kind: 'tcp', action: 'create', node: nodeName, service });
        return;
      }
      const fields = diff(have.service, service);
      if (fields.length === 0) return;
      ctx.changes.push({ action: 'update', kind: 'tcpService', name: key, fields });
      steps.push({ kind: 'tcp', action: 'update', node: nodeName, id: have.id, service });
    });
  }
  if (!ctx.prune) return;
  // A pruned node takes its services along; only those of nodes that stay are deleted one by one.
  const isKept = (node: string) =>
    ctx.desired.nodes.some((wanted) => wanted.name === node || (wanted.local && node === localName));
  for (const [key, have] of ctx.state.http) {
    if (seenHttp.has(key) || !isKept(have.node)) continue;
    ctx.changes.push({ action: 'delete', kind: 'httpService', name: key, fields: [] });
    removals.push({ kind: 'http', action: 'delete', node: have.node, name: key, id: have.id });
  }
  for (const [key, have] of ctx.state.tcp) {
    if (seenTcp.has(key) || !isKept(have.node)) continue;
    ctx.changes.push({ action: 'delete', kind: 'tcpService', name: key, fields: [] });
    removals.push({ kind: 'tcp', action: 'delete', node: have.node, name: key, id: have.id });
  }
}

export function planConfig(
  state: GatewayState,
  desired: ConfigDocument,
  options: { prune: boolean; now: Date },
): PlanResult {
  const ctx: Context = { state, desired, ...options, changes: [], errors: [], notes: [] };
  const first: Step[] = [];
  const domains: Step[] = [];
  const removals: Step[] = [];
  const services: Step[] = [];
  const tokenPrunes: Step[] = [];
  const domainPrunes: Step[] = [];
  const providerPrunes: Step[] = [];
  const nodePrunes: Step[] = [];
  planProviders(ctx, first, providerPrunes);
  planNodes(ctx, first, nodePrunes);
  planTokens(ctx, first, tokenPrunes);
  planDomains(ctx, domains, domainPrunes);
  planServices(ctx, removals, services);
  const labelled = state.labelledHttp.size + state.labelledTcp.size;
  if (labelled > 0)
    ctx.notes.push(
      `${labelled} service${labelled === 1 ? '' : 's'} published by Docker labels ${labelled === 1 ? 'is' : 'are'} not part of the document: the labels are their configuration`,
    );
  // Removals first, so a service moving to another node (or a route freed and taken) finds its place free; nodes
  // are pruned (with their services) before the domains those services used, providers after the policies.
  const steps = [
    ...first,
    ...domains,
    ...removals,
    ...services,
    ...tokenPrunes,
    ...nodePrunes,
    ...domainPrunes,
    ...providerPrunes,
  ];
  return { plan: { changes: ctx.changes, errors: ctx.errors, notes: ctx.notes }, steps };
}
