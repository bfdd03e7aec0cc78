import { and, eq } from 'drizzle-orm';
import {
  ruleMessages,
  type ListResponse,
  type Node,
  type NodeCreate,
  type NodeCreated,
  type NodeSort,
  type NodeUpdate,
  type SortOrder,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { applyChanges, nodeScope } from '../../dataplane-apply.js';
import { generateKeyPair, generatePresharedKey } from '../../dataplane/wireguard/keys.js';
import { nodes, personalAccessTokens } from '../../db/schema.js';
import { AppError, badRequest, fieldError, notFound } from '../../errors.js';
import type { NodeEvents } from '../../http/events.js';
import { newTokenValues } from '../tokens/service.js';
import { resolveGatewayNetworks } from './gateway-network.js';
import { chooseAddress } from './node-address.js';
import { configFileName, renderConfigFor } from './node-config.js';
import { getNodeRow, listNodeRows, listUsedAddresses, searchNodeRows, type NodeListType } from './repository.js';
import { gatewayNetworksOf, toNode, type NodeRow, type NodeViewRow } from './to-node.js';

// Order in every mutation: check, write (one synchronous transaction), tell the streams, then converge the
// data plane. A rejected apply surfaces as a 400 but the change stays stored, as the console expects.

export const FIRST_TOKEN_NAME = 'default';

export interface NodeContext {
  deps: AppDeps;
  events: NodeEvents;
}

export const viewNode = (deps: AppDeps, row: NodeViewRow): Node =>
  toNode(row, deps.dataPlane.status.get(row.publicKey));

export async function getNode(deps: AppDeps, id: number): Promise<Node> {
  return viewNode(deps, await getNodeRow(deps, id));
}

/** 404 unless the node exists (a stream checks before it switches to events, so the client sees the error). */
export async function assertNodeExists(deps: AppDeps, id: number): Promise<void> {
  await getNodeRow(deps, id);
}

/** The node's wg-quick file and the name to save it under; 400 for the local node. */
export async function getNodeConfigFile(deps: AppDeps, id: number): Promise<{ fileName: string; config: string }> {
  const row = await getNodeRow(deps, id);
  return { fileName: configFileName(row), config: await renderConfigFor(deps, row) };
}

export interface NodeListQuery {
  page: number;
  limit: number;
  type?: NodeListType;
  q?: string | undefined;
  sort?: NodeSort | undefined;
  order?: SortOrder | undefined;
}

/** Whether the list's order or membership depends on more than ids (a status change can move rows). */
export const isShapedList = (query: NodeListQuery): boolean => Boolean(query.q) || query.sort !== undefined;

const STATUS_RANK: Record<Node['status'], number> = { online: 0, idle: 1, offline: 2 };
const sortKeys: Record<NodeSort, (node: Node) => string | number> = {
  name: (node) => node.name.toLowerCase(),
  status: (node) => STATUS_RANK[node.status],
  // Never-seen nodes sort as the oldest handshake.
  handshake: (node) => (node.latestHandshakeTimestamp ? Date.parse(node.latestHandshakeTimestamp) || 0 : 0),
  traffic: (node) => node.transferRx + node.transferTx,
};

/**
 * The node list; `scope` (accounts/node-scope.ts): only those nodes, for an account limited to some (null: every
 * node).
 */
export async function listNodes(
  deps: AppDeps,
  query: NodeListQuery,
  scope: readonly number[] | null = null,
): Promise<ListResponse<Node>> {
  const { page, limit } = query;
  if (!isShapedList(query) && scope === null) {
    // The spec's list: prepared, one page read by index.
    const { rows, total } = await listNodeRows(deps, { page, limit, type: query.type });
    return { data: rows.map((row) => viewNode(deps, row)), page, limit, total };
  }
  // Searching or sorting by a live value reads every matching row; node counts are in the hundreds at most.
  const all = (await searchNodeRows(deps, { type: query.type, q: query.q }))
    .filter((row) => scope === null || scope.includes(row.id))
    .map((row) => viewNode(deps, row));
  if (query.sort) {
    const key = sortKeys[query.sort];
    const direction = query.order === 'desc' ? -1 : 1;
    // Array.sort is stable: equal keys keep creation order, so pages do not shuffle between reads.
    all.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return x < y ? -direction : x > y ? direction : 0;
    });
  } else if (query.order === 'desc') all.reverse();
  return { data: all.slice((page - 1) * limit, page * limit), page, limit, total: all.length };
}

function refuseLocal(row: NodeRow, action: string): void {
  if (row.isLocal) throw badRequest(`The local node cannot be ${action}`);
}

export async function createNode(ctx: NodeContext, body: NodeCreate): Promise<NodeCreated> {
  const { deps } = ctx;
  const isGateway = body.isGateway ?? false;
  const [gatewayNetwork = null, ...extraGatewayNetworks] = await resolveGatewayNetworks(deps, body, undefined, 'admin');
  const keys = generateKeyPair();
  const presharedKey = generatePresharedKey();
  const at = deps.now().toISOString();
  const { row, token } = await deps.db.write(async (tx) => {
    // Address choice and insert share the transaction, so two concurrent creates cannot take the same address.
    const address = chooseAddress(deps.config.vpnSubnet, await listUsedAddresses(tx), body.address);
    const inserted = await tx
      .insert(nodes)
      .values({
        name: body.name,
        address,
        allowInternet: body.allowInternet ?? false,
        isGateway,
        gatewayNetwork,
        extraGatewayNetworks,
        allowTokenNetworks: isGateway && body.allowTokenNetworks === true,
        publicKey: keys.publicKey,
        privateKeyEnc: deps.secrets.encrypt(keys.privateKey),
        presharedKeyEnc: deps.secrets.encrypt(presharedKey),
        createdAt: at,
        updatedAt: at,
      })
      .returning()
      .get();
    const first = newTokenValues(deps, inserted.id, { name: FIRST_TOKEN_NAME });
    await tx.insert(personalAccessTokens).values(first.values).run();
    return { row: inserted, token: first.token };
  });
  ctx.events.emit({ kind: 'created', nodeIds: [row.id] });
  // The answer carries the node's first token, shown once: it must reach the operator even if the data plane is
  // down (the node is applied once it is back) or sets the node aside (its applyError says why).
  // A new node has no services yet: its peer alone.
  await applyChanges(deps, undefined, { hosts: [], http: [], nodes: [row.id] }).catch((err: unknown) => {
    if (!(err instanceof AppError) || (err.code !== 'dataplane_unavailable' && err.code !== 'dataplane_rejected'))
      throw err;
  });
  return { ...viewNode(deps, row), token };
}

export async function updateNode(ctx: NodeContext, id: number, body: NodeUpdate): Promise<Node> {
  const { deps } = ctx;
  const current = await getNodeRow(deps, id);
  refuseLocal(current, 'edited');
  const isGateway = body.isGateway ?? current.isGateway;
  if (body.allowTokenNetworks === true && !isGateway)
    throw fieldError('allowTokenNetworks', ruleMessages.tokenNetworksNotGateway);
  // Turning the gateway option off clears the networks, as the console's form does.
  const before = gatewayNetworksOf(current);
  const networks = await resolveGatewayNetworks(
    deps,
    body,
    { id, isGateway: current.isGateway, networks: before },
    'admin',
  );
  const [gatewayNetwork = null, ...extraGatewayNetworks] = networks;
  // Subnets the operator sets are the operator's; the same ones sent back (any edit in the console) stay the token's.
  const isSameNetworks = networks.length === before.length && networks.every((network, i) => network === before[i]);
  const row = await deps.db.write(async (tx) => {
    let address = current.address;
    if (body.address && body.address !== current.address) {
      const used = await listUsedAddresses(tx);
      used.delete(current.address);
      address = chooseAddress(deps.config.vpnSubnet, used, body.address);
    }
    return await tx
      .update(nodes)
      .set({
        name: body.name ?? current.name,
        address,
        allowInternet: body.allowInternet ?? current.allowInternet,
        isGateway,
        gatewayNetwork,
        extraGatewayNetworks,
        allowTokenNetworks: isGateway && (body.allowTokenNetworks ?? current.allowTokenNetworks),
        networksSetBy: isGateway && isSameNetworks ? current.networksSetBy : 'admin',
        updatedAt: deps.now().toISOString(),
      })
      .where(eq(nodes.id, id))
      .returning()
      .get();
  });
  return announceChanged(ctx, row);
}

/** A node's token asks to set its subnets where the operator has not allowed it. */
export const TOKEN_NETWORKS_NOT_ALLOWED =
  "The gateway's operator has not allowed this node's access tokens to set its networks: the operator sets them, or allows this, in the node's form in the console";

/**
 * The CLI's `postern networks set`: a gateway node whose operator allowed it replaces its own subnets. Becoming a
 * gateway and being allowed stay the operator's decisions; the subnets are held to a token's limits (private,
 * narrow enough, nothing the gateway reaches) and refusals name nothing of the host or of another tenant. The data
 * plane checks them again on every apply (the node is `networksSetBy: 'node'` until the operator sets them).
 */
export async function setOwnGatewayNetworks(ctx: NodeContext, id: number, gatewayNetworks: string[]): Promise<Node> {
  const { deps } = ctx;
  const current = await getNodeRow(deps, id);
  if (!current.isGateway)
    throw badRequest("This node is not a gateway: the gateway's operator makes a node a gateway in the console");
  if (!current.allowTokenNetworks) throw new AppError('forbidden', TOKEN_NETWORKS_NOT_ALLOWED);
  const [gatewayNetwork = null, ...extraGatewayNetworks] = await resolveGatewayNetworks(
    deps,
    { gatewayNetworks },
    { id, isGateway: true, networks: gatewayNetworksOf(current) },
    'node',
  );
  const row = await deps.db.write(
    async (tx) =>
      await tx
        .update(nodes)
        .set({ gatewayNetwork, extraGatewayNetworks, networksSetBy: 'node', updatedAt: deps.now().toISOString() })
        // The operator may have turned it off or made the node a regular one since the read: only then, not after.
        .where(and(eq(nodes.id, id), eq(nodes.isGateway, true), eq(nodes.allowTokenNetworks, true)))
        .returning()
        .get(),
  );
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- drizzle types get() as the row; no match gives undefined
  if (!row) throw new AppError('forbidden', TOKEN_NETWORKS_NOT_ALLOWED);
  return announceChanged(ctx, row);
}

/** After an update: the row as the API shows it, once subscribers heard and the data plane converged. */
async function announceChanged(ctx: NodeContext, row: typeof nodes.$inferSelect | undefined): Promise<Node> {
  if (!row) throw notFound('Node');
  ctx.events.emit({ kind: 'changed', nodeIds: [row.id] });
  // Its peer and its services' hosts and instances only: never another node's.
  await applyChanges(ctx.deps, { type: 'node', id: row.id }, await nodeScope(ctx.deps.db, [row.id]));
  return viewNode(ctx.deps, row);
}

export async function setNodeEnabled(ctx: NodeContext, id: number, enabled: boolean): Promise<Node> {
  const { deps } = ctx;
  refuseLocal(await getNodeRow(deps, id), enabled ? 'connected' : 'disconnected');
  const row = await deps.db.write(
    async (tx) =>
      await tx
        .update(nodes)
        .set({ enabled, updatedAt: deps.now().toISOString() })
        .where(eq(nodes.id, id))
        .returning()
        .get(),
  );
  return announceChanged(ctx, row);
}

export async function deleteNode(ctx: NodeContext, id: number): Promise<void> {
  const { deps } = ctx;
  refuseLocal(await getNodeRow(deps, id), 'deleted');
  // Tokens and services go with it (ON DELETE CASCADE): what they served is read in the same transaction.
  const scope = await deps.db.write(async (tx) => {
    const served = await nodeScope(tx, [id]);
    await tx.delete(nodes).where(eq(nodes.id, id)).run();
    return served;
  });
  ctx.events.emit({ kind: 'deleted', nodeIds: [id] });
  await applyChanges(deps, undefined, scope);
}
