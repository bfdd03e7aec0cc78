import type { ListResponse, Node, NodeCreate, NodeSort, NodeUpdate, SortOrder } from '@postern/contract';
import {
  defaults,
  NODE_PAGE_EVENT,
  NodeDetailEventSchema,
  NodeListPageEventSchema,
  operations,
  timing,
} from '@postern/contract';
import type { QueryClient } from '@tanstack/react-query';
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { call, isStoredButNotAppliedError, saveFile, toastActionFailure, toDownload } from '../lib/api';
import { openStream } from '../lib/sse';
import { showToast } from '../lib/toast-store';
import { t } from '../i18n/i18n';
import { observeKeys } from './observe-keys';
import { serviceKeys } from './services';

// Nodes: query keys, query options, mutations and the live streams, which write into the same cache entries.

export type NodeTypeFilter = 'nodes' | 'gateways' | undefined;
export type NodeListParams = {
  page: number;
  limit: number;
  type?: NodeTypeFilter;
  q?: string | undefined;
  sort?: NodeSort | undefined;
  order?: SortOrder | undefined;
};

export const nodeKeys = {
  all: ['nodes'] as const,
  lists: () => [...nodeKeys.all, 'list'] as const,
  list: (params: NodeListParams) =>
    [
      ...nodeKeys.lists(),
      {
        page: params.page,
        limit: params.limit,
        type: params.type ?? 'all',
        q: params.q ?? '',
        sort: params.sort ?? '',
        order: params.order ?? '',
      },
    ] as const,
  details: () => [...nodeKeys.all, 'detail'] as const,
  detail: (id: number) => [...nodeKeys.details(), id] as const,
};

export const nodeListQueryOptions = (params: NodeListParams) =>
  queryOptions({
    queryKey: nodeKeys.list(params),
    queryFn: ({ signal }) => call(operations.listNodes, { query: params, signal }),
    placeholderData: keepPreviousData,
  });

/** the spec's "Error catalogue": a failed fetch by id is logged and gives null. */
export const nodeQueryOptions = (id: number) =>
  queryOptions({
    queryKey: nodeKeys.detail(id),
    queryFn: async ({ signal }): Promise<Node | null> => {
      try {
        return await call(operations.getNode, { params: { id }, signal });
      } catch (error) {
        console.error(`loading node ${id} failed`, error);
        return null;
      }
    },
  });

/** Replaces rows by id in every cached list page. */
export function replaceNodeRows(list: ListResponse<Node>, nodes: readonly Node[]): ListResponse<Node> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  return { ...list, data: list.data.map((row) => byId.get(row.id) ?? row) };
}

/** Writes a node everywhere it is shown: its detail entry and any list row. */
export function writeNodeToCache(queryClient: QueryClient, node: Node): void {
  queryClient.setQueryData(nodeKeys.detail(node.id), node);
  queryClient.setQueriesData<ListResponse<Node>>(
    { queryKey: nodeKeys.lists() },
    (list) => list && replaceNodeRows(list, [node]),
  );
}

/**
 * After a create or delete: a list on screen is streamed and gets the new page pushed (with its total), so it is not
 * fetched again; lists not on screen are marked stale and read when they are shown next.
 */
const markListsStale = (queryClient: QueryClient) => () =>
  Promise.all([
    queryClient.invalidateQueries({ queryKey: nodeKeys.lists(), refetchType: 'none' }),
    // The home page's totals and offline nodes count this node.
    queryClient.invalidateQueries({ queryKey: observeKeys.attention }),
  ]);

/** After a change the server stored but did not apply, what is shown is read again (the streams may lag behind). */
async function refreshStoredChange(queryClient: QueryClient, error: unknown): Promise<void> {
  if (isStoredButNotAppliedError(error)) await queryClient.invalidateQueries({ queryKey: nodeKeys.all });
}

export function useCreateNode() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NodeCreate) => call(operations.createNode, { body }),
    onSuccess: markListsStale(queryClient),
  });
}

export function useUpdateNode() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: NodeUpdate }) =>
      call(operations.updateNode, { params: { id }, body }),
    onSuccess: (node) => {
      writeNodeToCache(queryClient, node);
      showToast({ message: t('nodes.toast.updated'), type: 'success' });
    },
    onError: (error) => refreshStoredChange(queryClient, error),
  });
}

export function useSetNodeEnabled() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, enabled }: { id: number; enabled: boolean }) =>
      call(enabled ? operations.enableNode : operations.disableNode, { params: { id } }),
    onSuccess: (node, { enabled }) => {
      // Applied locally after the call succeeds (the spec's "States and transitions"), whatever the stream says later.
      writeNodeToCache(queryClient, { ...node, enabled });
      void queryClient.invalidateQueries({ queryKey: observeKeys.attention });
      showToast({ message: t(enabled ? 'nodes.toast.connected' : 'nodes.toast.disconnected'), type: 'success' });
    },
    onError: (error) => refreshStoredChange(queryClient, error),
  });
}

export function useDeleteNode() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteNode, { params: { id } }),
    onSuccess: async (_, id) => {
      queryClient.removeQueries({ queryKey: nodeKeys.detail(id) });
      showToast({ message: t('nodes.toast.deleted'), type: 'success' });
      // The node's services went with it: domain rows and cards must not keep showing them.
      await Promise.all([markListsStale(queryClient)(), queryClient.invalidateQueries({ queryKey: serviceKeys.all })]);
    },
    // Deleted, though the gateway has not caught up: the node and its services are gone all the same.
    onError: async (error, id) => {
      if (!isStoredButNotAppliedError(error)) return;
      queryClient.removeQueries({ queryKey: nodeKeys.detail(id) });
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: nodeKeys.lists() }),
        queryClient.invalidateQueries({ queryKey: serviceKeys.all }),
      ]);
    },
  });
}

/** Saves the node's WireGuard config; the name comes from Content-Disposition, default config.conf. */
export async function downloadNodeConfig(id: number): Promise<void> {
  try {
    saveFile(toDownload(await call(operations.downloadNodeConfig, { params: { id } }), 'config.conf'));
  } catch (error) {
    // A download is an action too (the API layer toasts failed changes only): say why no file came.
    toastActionFailure(error);
    throw error;
  }
}

/** The node's WireGuard config as text (the node-ready dialog's QR code); it holds the node's private key. */
export async function fetchNodeConfigText(id: number, signal?: AbortSignal): Promise<string> {
  return (await call(operations.downloadNodeConfig, { params: { id }, ...(signal ? { signal } : {}) })).content;
}

/**
 * While mounted, each pushed page replaces the cached one (the spec's "Screens and routes": pushed rows replace the
 * shown rows). The stream is asked for named `page` events (docs/api.md), which carry the total too, so a node added or
 * removed elsewhere shows without another request.
 */
export function useNodeListStream(params: NodeListParams): void {
  const queryClient = useQueryClient();
  const { page, limit, type, q, sort, order } = params;
  useEffect(
    () =>
      openStream({
        path: operations.nodeStream.path,
        query: { page, limit, type, q, sort, order, format: 'page' },
        event: NODE_PAGE_EVENT,
        schema: NodeListPageEventSchema,
        onMessage: (list) => {
          queryClient.setQueryData(nodeKeys.list({ page, limit, type, q, sort, order }), list);
          for (const node of list.data) queryClient.setQueryData(nodeKeys.detail(node.id), node);
        },
        reconnectMs: timing.logReconnectMs,
      }),
    [queryClient, page, limit, type, q, sort, order],
  );
}

/**
 * While mounted, each pushed node replaces the shown one. Beyond the spec (which closes it on error), the stream
 * reconnects with back-off while the session holds, as the list's does: a restarted gateway sends the node again on
 * connect, so the page recovers by itself.
 */
export function useNodeStream(id: number, isEnabled: boolean): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!isEnabled) return undefined;
    return openStream({
      path: operations.nodeStream.path,
      query: { id },
      schema: NodeDetailEventSchema,
      onMessage: (node) => writeNodeToCache(queryClient, node),
      reconnectMs: timing.logReconnectMs,
    });
  }, [queryClient, id, isEnabled]);
}

export const NODE_PAGE_SIZE = defaults.pageSize;
