import type { FastifyBaseLogger } from 'fastify';
import {
  NODE_PAGE_EVENT,
  NodeDetailEventSchema,
  NodeListEventSchema,
  NodeListPageEventSchema,
  type ListResponse,
  type Node,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { NodeChange, NodeEvents } from '../../http/events.js';
import type { SseConnection } from '../../sse.js';
import { findNode, findNodeIdsByPublicKeys, type NodeListType } from './repository.js';
import { isShapedList, listNodes, viewNode, type NodeListQuery } from './service.js';

// One shared source for every /api/nodes/stream client: status changes from the data plane's single poll and
// node mutations from the event bus are collected per tick, then each affected page or node is loaded and
// serialised once and the same text written to all of its subscribers. Nothing polls per client.

export type ListQuery = NodeListQuery & { type: NodeListType };

/** `rows`: the spec's message, an array of the page's nodes; `page`: a named event with the whole list answer. */
export type ListFormat = 'rows' | 'page';

interface ListGroup {
  query: ListQuery;
  /** The nodes its subscribers may see (accounts/node-scope.ts); null: every node. */
  scope: readonly number[] | null;
  clients: Map<SseConnection, ListFormat>;
  /** Node ids on the page as last sent: a status change elsewhere does not concern this group. */
  ids: Set<number>;
}

export interface NodeStreamHub {
  addListClient(conn: SseConnection, query: ListQuery, format?: ListFormat, scope?: readonly number[] | null): void;
  addDetailClient(conn: SseConnection, nodeId: number): void;
  close(): void;
}

/** Sends `page` to each client in its format, each format serialised once. */
function sendTo(clients: ReadonlyMap<SseConnection, ListFormat>, page: ListResponse<Node>): void {
  const json: Partial<Record<ListFormat, string>> = {};
  for (const [client, format] of clients) {
    if (format === 'page')
      client.sendJson((json.page ??= JSON.stringify(NodeListPageEventSchema.parse(page))), NODE_PAGE_EVENT);
    else client.sendJson((json.rows ??= JSON.stringify(NodeListEventSchema.parse(page.data))));
  }
}

/** Clients asking for the same page of the same list (in the same scope) share one group. */
const listGroupKey = (query: ListQuery, scope: readonly number[] | null): string =>
  JSON.stringify([
    scope,
    query.type ?? 'all',
    query.page,
    query.limit,
    query.q ?? '',
    query.sort ?? '',
    query.order ?? '',
  ]);

/** What changed since the last flush: nodes by id, peers by public key, and whether a node came or went. */
class PendingChanges {
  private ids = new Set<number>();
  private keys: string[] = [];
  private structural = false;

  addNodes(ids: Iterable<number>, structural: boolean): void {
    for (const id of ids) this.ids.add(id);
    if (structural) this.structural = true;
  }

  addKeys(publicKeys: readonly string[]): void {
    this.keys.push(...publicKeys);
  }

  /** Everything pending, leaving nothing. */
  take(): { ids: Set<number>; keys: string[]; structural: boolean } {
    const taken = { ids: this.ids, keys: this.keys, structural: this.structural };
    this.ids = new Set();
    this.keys = [];
    this.structural = false;
    return taken;
  }
}

export function createNodeStreamHub(deps: AppDeps, events: NodeEvents, log: FastifyBaseLogger): NodeStreamHub {
  const listGroups = new Map<string, ListGroup>();
  const detailClients = new Map<number, Set<SseConnection>>();
  const pending = new PendingChanges();
  let isFlushScheduled = false;

  const sendPage = async (group: ListGroup): Promise<void> => {
    const page = await listNodes(deps, group.query, group.scope);
    group.ids = new Set(page.data.map((node) => node.id));
    sendTo(group.clients, page);
  };

  const sendDetail = async (nodeId: number, clients: Set<SseConnection>): Promise<void> => {
    const row = await findNode(deps, nodeId);
    if (!row) {
      // The node was deleted: nothing more will come for it.
      for (const client of clients) client.close();
      detailClients.delete(nodeId);
      return;
    }
    const json = JSON.stringify(NodeDetailEventSchema.parse(viewNode(deps, row)));
    for (const client of clients) client.sendJson(json);
  };

  const flush = async (): Promise<void> => {
    isFlushScheduled = false;
    const { ids, keys, structural } = pending.take();
    for (const id of await findNodeIdsByPublicKeys(deps, keys)) ids.add(id);
    for (const id of ids) {
      const clients = detailClients.get(id);
      if (clients) await sendDetail(id, clients);
    }
    for (const group of listGroups.values()) {
      // A create or delete shifts rows across pages; a change only matters to the page showing the node.
      // A searched or live-sorted page can gain or reorder rows on any change.
      if (structural || isShapedList(group.query) || group.scope !== null || [...ids].some((id) => group.ids.has(id)))
        await sendPage(group);
    }
  };

  const schedule = (): void => {
    if (isFlushScheduled) return;
    isFlushScheduled = true;
    setImmediate(async () => {
      try {
        await flush();
      } catch (error) {
        // A failed read must not kill the process; the next change retries.
        log.error({ err: error }, 'node stream update failed');
      }
    });
  };

  const onNodeChange = (change: NodeChange): void => {
    pending.addNodes(change.nodeIds, change.kind !== 'changed');
    schedule();
  };
  const onStatusChange = (publicKeys: string[]): void => {
    pending.addKeys(publicKeys);
    schedule();
  };

  const unsubscribeEvents = events.subscribe(onNodeChange);
  const unsubscribeStatus = deps.dataPlane.status.onChange(onStatusChange);

  return {
    async addListClient(conn, query, format = 'rows', scope = null) {
      const key = listGroupKey(query, scope);
      let group = listGroups.get(key);
      if (!group) {
        group = { query, scope, clients: new Map(), ids: new Set() };
        listGroups.set(key, group);
      }
      const joined = group;
      const page = await listNodes(deps, query, scope);
      joined.ids = new Set(page.data.map((node) => node.id));
      joined.clients.set(conn, format);
      sendTo(new Map([[conn, format]]), page);
      void conn.closed.then(() => {
        joined.clients.delete(conn);
        if (joined.clients.size === 0 && listGroups.get(key) === joined) listGroups.delete(key);
      });
    },
    async addDetailClient(conn, nodeId) {
      const row = await findNode(deps, nodeId);
      if (!row) {
        conn.close();
        return;
      }
      let clients = detailClients.get(nodeId);
      if (!clients) {
        clients = new Set();
        detailClients.set(nodeId, clients);
      }
      const joined = clients;
      joined.add(conn);
      conn.send(NodeDetailEventSchema.parse(viewNode(deps, row)));
      void conn.closed.then(() => {
        joined.delete(conn);
        if (joined.size === 0 && detailClients.get(nodeId) === joined) detailClients.delete(nodeId);
      });
    },
    close() {
      unsubscribeEvents();
      unsubscribeStatus();
      for (const group of listGroups.values()) for (const client of group.clients.keys()) client.close();
      for (const clients of detailClients.values()) for (const client of clients) client.close();
      listGroups.clear();
      detailClients.clear();
    },
  };
}
