import {
  defaults,
  operations,
  type HttpService,
  type HttpServiceCreate,
  type ListResponse,
  type TcpService,
  type ServiceType,
  type TcpServiceCreate,
} from '@postern/contract';
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call, isStoredButNotAppliedError } from '../lib/api';
import { observeKeys } from './observe-keys';

// HTTP and TCP services (the spec's "The calls it makes"). Lists are keyed under `services/{type}`; every mutation
// invalidates the `services` prefix, because one change shows up in a node's card and in a domain's expanded row alike.

export type AnyService = HttpService | TcpService;

/** Where a list comes from: one node's services, or every node's services on one domain. */
export type ServiceScope = { kind: 'node'; nodeId: number } | { kind: 'domain'; domain: string };

/** One table's request: the view as the API takes it (page and page size filled in). */
export type ServiceListRequest = {
  page: number;
  limit: number;
  q?: string;
  sort?: 'name' | 'status';
  order?: 'asc' | 'desc';
};

/** Absent fields are left out, so a table's first page and DomainServices' count share one key. */
export function toServiceListRequest(view: {
  page?: number | undefined;
  limit?: number | undefined;
  q?: string | undefined;
  sort?: 'name' | 'status' | undefined;
  order?: 'asc' | 'desc' | undefined;
}): ServiceListRequest {
  return {
    page: view.page ?? 1,
    limit: view.limit ?? defaults.cardPageSize,
    ...(view.q ? { q: view.q } : {}),
    ...(view.sort ? { sort: view.sort } : {}),
    ...(view.order ? { order: view.order } : {}),
  };
}

export const serviceKeys = {
  all: ['services'] as const,
  type: (type: ServiceType) => [...serviceKeys.all, type] as const,
  list: (type: ServiceType, scope: ServiceScope, request: ServiceListRequest) =>
    [...serviceKeys.type(type), scope, request] as const,
};

/** One page of a node's services of one type, or of every node's services on one domain. */
function listServices(
  type: ServiceType,
  scope: ServiceScope,
  request: ServiceListRequest,
  signal: AbortSignal,
): Promise<ListResponse<AnyService>> {
  if (scope.kind === 'node')
    return call(operations.listNodeServices, { params: { nodeId: scope.nodeId, type }, query: request, signal });
  const operation = type === 'http' ? operations.listHttpServices : operations.listTcpServices;
  return call(operation, { query: { ...request, domain: scope.domain }, signal });
}

/** One page (5 rows by default, as in the service cards) of a node's or a domain's services of one type. */
export const serviceListQueryOptions = (
  type: ServiceType,
  scope: ServiceScope,
  view: Parameters<typeof toServiceListRequest>[0] = {},
) => {
  const request = toServiceListRequest(view);
  return queryOptions({
    queryKey: serviceKeys.list(type, scope, request),
    queryFn: ({ signal }) => listServices(type, scope, request, signal),
    // The old rows stay while the next page or search loads (NavigationProgress shows it is loading).
    placeholderData: keepPreviousData,
  });
};

export type ServiceRef = { nodeId: number; type: ServiceType; id: number };

/** Refreshes every service list after a change, also one stored but not applied (it now shows its applyError). */
function useRefreshServices() {
  const queryClient = useQueryClient();
  // The home page's totals and set-aside list change with services too.
  const invalidate = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: serviceKeys.all }),
      queryClient.invalidateQueries({ queryKey: observeKeys.attention }),
    ]);
  return {
    onSuccess: async (): Promise<void> => {
      await invalidate();
    },
    onError: async (error: Error): Promise<void> => {
      if (isStoredButNotAppliedError(error)) await invalidate();
    },
  };
}

export function useCreateHttpService() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: ({ nodeId, body }: { nodeId: number; body: HttpServiceCreate }) =>
      call(operations.createHttpService, { params: { nodeId }, body }),
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}

export function useCreateTcpService() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: ({ nodeId, body }: { nodeId: number; body: TcpServiceCreate }) =>
      call(operations.createTcpService, { params: { nodeId }, body }),
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}

export function useUpdateHttpService() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: ({ ref, body }: { ref: Omit<ServiceRef, 'type'>; body: HttpServiceCreate }) =>
      call(operations.updateHttpService, { params: ref, body }),
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}

export function useUpdateTcpService() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: ({ ref, body }: { ref: Omit<ServiceRef, 'type'>; body: TcpServiceCreate }) =>
      call(operations.updateTcpService, { params: ref, body }),
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}

/** Enable Access / Disable Access: the answer's shape is not needed, the lists are refetched. */
export function useSetServiceAccess() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: async ({ ref, isEnabled }: { ref: ServiceRef; isEnabled: boolean }) => {
      await call(isEnabled ? operations.enableService : operations.disableService, { params: ref });
    },
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}

export function useDeleteService() {
  const refresh = useRefreshServices();
  return useMutation({
    mutationFn: (ref: ServiceRef) => call(operations.deleteService, { params: ref }),
    onSuccess: refresh.onSuccess,
    onError: refresh.onError,
  });
}
