import { asc } from 'drizzle-orm';
import {
  accessLimits,
  CONFIG_DOCUMENT_VERSION,
  type ConfigDocument,
  type ConfigHttpService,
  type ConfigNode,
  type ConfigPolicy,
  type ConfigTcpService,
  type ConfigToken,
} from '@postern/contract';
import type { ReadDb } from '../../db/client.js';
import {
  accessPolicies,
  domains,
  httpServices,
  identityProviders,
  nodes,
  personalAccessTokens,
  tcpServices,
} from '../../db/schema.js';
import { gatewayNetworksOf } from '../nodes/to-node.js';

// The gateway as a configuration document (contract config.ts), plus the ids behind its names that a plan needs.
// Read in one go (a handful of queries over whole tables: a gateway holds thousands of rows at most), sorted so the
// same gateway always gives the same document. Secrets are left out: only whether one is set.

type PolicyRow = typeof accessPolicies.$inferSelect;

export const httpKey = (domain: string | null, path: string): string => `${domain ?? ''}${path}`;
export const tcpKey = (proto: string, port: number): string => `${proto}/${port}`;

/** A service a node's Docker labels made: the node's agent keeps it, a document neither names nor prunes it. */
export interface LabelledService {
  node: string;
  container: string;
}

export interface GatewayState {
  document: ConfigDocument;
  providerIds: Map<string, number>;
  /** Node name → id; the local node under its name too. */
  nodeIds: Map<string, number>;
  localNode: { id: number; name: string } | null;
  /** Names more than one node has: such a node cannot be named by a document. */
  duplicateNodeNames: string[];
  tokens: Map<string, (ConfigToken & { id: number })[]>;
  domainIds: Map<string, number>;
  http: Map<string, { id: number; node: string; service: ConfigHttpService }>;
  tcp: Map<string, { id: number; node: string; service: ConfigTcpService }>;
  labelledHttp: Map<string, LabelledService>;
  labelledTcp: Map<string, LabelledService>;
}

const DEFAULT_POLICY: ConfigPolicy = {
  mode: 'public',
  provider: null,
  allowEmails: [],
  allowEmailDomains: [],
  allowGroups: [],
  passwordSet: false,
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: accessLimits.sessionSecondsDefault,
};

function toPolicy(row: PolicyRow, providers: Map<number, string>): ConfigPolicy {
  return {
    mode: row.mode,
    provider: row.providerId === null ? null : (providers.get(row.providerId) ?? null),
    allowEmails: row.allowEmails,
    allowEmailDomains: row.allowEmailDomains,
    allowGroups: row.allowGroups,
    passwordSet: row.passwordHash !== null,
    shareLinks: row.shareLinks,
    bypassPaths: row.bypassPaths,
    bypassNetworks: row.bypassNetworks,
    sessionSeconds: row.sessionSeconds,
  };
}

/** A domain's policy that lets everyone in and sets nothing is what no policy means: the document says null. */
export function isDefaultPolicy(policy: ConfigPolicy | null): boolean {
  return policy === null || JSON.stringify(policy) === JSON.stringify(DEFAULT_POLICY);
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every table the document is made of, each in id order. */
function readTables(db: ReadDb) {
  return Promise.all([
    db.select().from(identityProviders).orderBy(asc(identityProviders.id)).all(),
    db.select().from(nodes).orderBy(asc(nodes.id)).all(),
    db.select().from(personalAccessTokens).orderBy(asc(personalAccessTokens.id)).all(),
    db.select().from(domains).orderBy(asc(domains.id)).all(),
    db.select().from(httpServices).orderBy(asc(httpServices.id)).all(),
    db.select().from(tcpServices).orderBy(asc(tcpServices.id)).all(),
    db.select().from(accessPolicies).orderBy(asc(accessPolicies.id)).all(),
  ]);
}

const toConfigProvider = (row: typeof identityProviders.$inferSelect) => ({
  name: row.name,
  issuer: row.issuer,
  clientId: row.clientId,
  clientSecretSet: row.clientSecretEnc !== null,
  scopes: row.scopes,
  groupsClaim: row.groupsClaim,
});

/** A node without its tokens and services; the local node's network settings are fixed, so the document omits them. */
const toConfigNode = (row: typeof nodes.$inferSelect): ConfigNode => ({
  name: row.name,
  local: row.isLocal,
  address: row.isLocal ? null : row.address,
  allowInternet: row.isLocal ? false : row.allowInternet,
  isGateway: row.isLocal ? false : row.isGateway,
  gatewayNetworks: row.isLocal ? [] : gatewayNetworksOf(row),
  allowTokenNetworks: row.isLocal ? false : row.allowTokenNetworks,
  enabled: row.isLocal ? true : row.enabled,
  tokens: [],
  http: [],
  tcp: [],
});

const toHttpService = (
  row: typeof httpServices.$inferSelect,
  backendHost: string | null,
  access: ConfigPolicy | null,
): ConfigHttpService => ({
  name: row.name,
  domain: row.domain === '' ? null : row.domain,
  path: row.pathLocation,
  backendProto: row.backendProto,
  backendHost,
  backendPort: row.backendPort,
  allowedIps: row.allowedIps,
  blockedIps: row.blockedIps,
  enabled: row.enabled,
  expiresAt: row.expiresAt,
  access,
});

const toTcpService = (row: typeof tcpServices.$inferSelect, backendHost: string | null): ConfigTcpService => ({
  name: row.name,
  proto: row.proto,
  port: row.port,
  ssl: row.ssl,
  domain: row.domain,
  backendHost,
  backendPort: row.backendPort,
  allowedIps: row.allowedIps,
  blockedIps: row.blockedIps,
  enabled: row.enabled,
  expiresAt: row.expiresAt,
});

/** Tokens by name, services by their key: the same gateway always gives the same document. */
function sortNode(node: ConfigNode): void {
  node.tokens.sort((a, b) => byName(a, b) || byKey(a.expireAt ?? '', b.expireAt ?? ''));
  node.http.sort((a, b) => byKey(httpKey(a.domain, a.path), httpKey(b.domain, b.path)));
  node.tcp.sort((a, b) => byKey(a.proto, b.proto) || a.port - b.port);
}

export async function readGatewayState(db: ReadDb): Promise<GatewayState> {
  const [providerRows, nodeRows, tokenRows, domainRows, httpRows, tcpRows, policyRows] = await readTables(db);
  const providerNames = new Map(providerRows.map((row) => [row.id, row.name]));
  const nodeNames = new Map(nodeRows.map((row) => [row.id, row.name]));
  const domainPolicies = new Map<number, PolicyRow>();
  const servicePolicies = new Map<number, PolicyRow>();
  for (const row of policyRows) {
    if (row.domainId !== null) domainPolicies.set(row.domainId, row);
    if (row.httpServiceId !== null) servicePolicies.set(row.httpServiceId, row);
  }

  const state: GatewayState = {
    document: { version: CONFIG_DOCUMENT_VERSION, identityProviders: [], nodes: [], domains: [] },
    providerIds: new Map(providerRows.map((row) => [row.name, row.id])),
    nodeIds: new Map(),
    localNode: null,
    duplicateNodeNames: [],
    tokens: new Map(),
    domainIds: new Map(domainRows.map((row) => [row.domain, row.id])),
    http: new Map(),
    tcp: new Map(),
    labelledHttp: new Map(),
    labelledTcp: new Map(),
  };

  state.document.identityProviders = providerRows.map(toConfigProvider).sort(byName);

  const documentNodes = new Map<number, ConfigNode>();
  for (const row of nodeRows) {
    if (state.nodeIds.has(row.name)) state.duplicateNodeNames.push(row.name);
    state.nodeIds.set(row.name, row.id);
    if (row.isLocal) state.localNode = { id: row.id, name: row.name };
    documentNodes.set(row.id, toConfigNode(row));
  }
  for (const row of tokenRows) {
    const node = documentNodes.get(row.nodeId);
    if (!node) continue;
    const token = { name: row.name, expireAt: row.expireAt, revoked: row.revoked };
    node.tokens.push(token);
    state.tokens.set(node.name, [...(state.tokens.get(node.name) ?? []), { ...token, id: row.id }]);
  }
  /** Only gateway nodes and the local node choose a backend host; a regular node's is always its own address. */
  const ownHost = (nodeId: number, host: string): string | null => {
    const node = documentNodes.get(nodeId);
    return node && (node.local || node.isGateway) ? host : null;
  };
  for (const row of httpRows) {
    const nodeName = nodeNames.get(row.nodeId) ?? '';
    const domain = row.domain === '' ? null : row.domain;
    const key = httpKey(domain, row.pathLocation);
    if (row.source !== null) {
      state.labelledHttp.set(key, { node: nodeName, container: row.source.container });
      continue;
    }
    const own = servicePolicies.get(row.id);
    const service = toHttpService(row, ownHost(row.nodeId, row.backendHost), own ? toPolicy(own, providerNames) : null);
    documentNodes.get(row.nodeId)?.http.push(service);
    state.http.set(key, { id: row.id, node: nodeName, service });
  }
  for (const row of tcpRows) {
    const nodeName = nodeNames.get(row.nodeId) ?? '';
    const key = tcpKey(row.proto, row.port);
    if (row.source !== null) {
      state.labelledTcp.set(key, { node: nodeName, container: row.source.container });
      continue;
    }
    const service = toTcpService(row, ownHost(row.nodeId, row.backendHost));
    documentNodes.get(row.nodeId)?.tcp.push(service);
    state.tcp.set(key, { id: row.id, node: nodeName, service });
  }
  for (const node of documentNodes.values()) sortNode(node);
  // The local node first (every gateway has it), then by name.
  state.document.nodes = [...documentNodes.values()].sort((a, b) => Number(b.local) - Number(a.local) || byName(a, b));
  state.document.domains = domainRows
    .map((row) => {
      const policy = domainPolicies.get(row.id);
      const access = policy ? toPolicy(policy, providerNames) : null;
      return {
        domain: row.domain,
        ssl: row.ssl,
        owner: row.ownerNodeId === null ? null : (nodeNames.get(row.ownerNodeId) ?? null),
        access: isDefaultPolicy(access) ? null : access,
      };
    })
    .sort((a, b) => byKey(a.domain, b.domain));
  return state;
}
