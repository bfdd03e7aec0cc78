import {
  buildPath,
  defaults,
  HttpServiceSchema,
  listOf,
  routes,
  TcpServiceSchema,
  type HttpService,
  type HttpServiceCreate,
  type ListResponse,
  type TcpService,
  type ServiceType,
  type TcpServiceCreate,
} from '@postern/contract';
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { request, send } from '../lib/api';

// HTTP and TCP services (console-spec §7). Lists are keyed under `services/{type}`; every mutation invalidates the
// `services` prefix, because one change shows up in a node's card and in a domain's expanded row alike.

const listSchemas = { http: listOf(HttpServiceSchema), tcp: listOf(TcpServiceSchema) } as const;

export type AnyService = HttpService | TcpService;

/** Where a list comes from: one node's services, or every node's services on one domain. */
export type ServiceScope = { kind: 'node'; nodeId: number } | { kind: 'domain'; domain: string };

export const serviceKeys = {
  all: ['services'] as const,
  type: (type: ServiceType) => [...serviceKeys.all, type] as const,
  list: (type: ServiceType, scope: ServiceScope, page: number) =>
    [...serviceKeys.type(type), scope, { page, limit: defaults.cardPageSize }] as const,
};

function listPath(type: ServiceType, scope: ServiceScope): string {
  if (scope.kind === 'node') return buildPath(routes.listNodeServices.path, { nodeId: scope.nodeId, type });
  return type === 'http' ? routes.listHttpServices.path : routes.listTcpServices.path;
}

/** One page (5 rows, as in the service cards) of a node's or a domain's services of one type. */
export const serviceListQueryOptions = (type: ServiceType, scope: ServiceScope, page: number) =>
  queryOptions({
    queryKey: serviceKeys.list(type, scope, page),
    queryFn: ({ signal }): Promise<ListResponse<AnyService>> =>
      request(listPath(type, scope), listSchemas[type], {
        query: {
          page,
          limit: defaults.cardPageSize,
          ...(scope.kind === 'domain' ? { domain: scope.domain } : {}),
        },
        signal,
      }),
  });

export type ServiceRef = { nodeId: number; type: ServiceType; id: number };

const servicePath = (path: string, { nodeId, type, id }: ServiceRef) => buildPath(path, { nodeId, type, id });

function useInvalidateServices() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: serviceKeys.all });
}

export function useCreateHttpService() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: ({ nodeId, body }: { nodeId: number; body: HttpServiceCreate }) =>
      request(buildPath(routes.createHttpService.path, { nodeId }), HttpServiceSchema, { method: 'POST', body }),
    onSuccess: invalidate,
  });
}

export function useCreateTcpService() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: ({ nodeId, body }: { nodeId: number; body: TcpServiceCreate }) =>
      request(buildPath(routes.createTcpService.path, { nodeId }), TcpServiceSchema, { method: 'POST', body }),
    onSuccess: invalidate,
  });
}

export function useUpdateHttpService() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: ({ ref, body }: { ref: Omit<ServiceRef, 'type'>; body: HttpServiceCreate }) =>
      request(servicePath(routes.updateService.path, { ...ref, type: 'http' }), HttpServiceSchema, {
        method: 'PATCH',
        body,
      }),
    onSuccess: invalidate,
  });
}

export function useUpdateTcpService() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: ({ ref, body }: { ref: Omit<ServiceRef, 'type'>; body: TcpServiceCreate }) =>
      request(servicePath(routes.updateService.path, { ...ref, type: 'tcp' }), TcpServiceSchema, {
        method: 'PATCH',
        body,
      }),
    onSuccess: invalidate,
  });
}

/** Enable Access / Disable Access: the answer's shape is not needed, the lists are refetched. */
export function useSetServiceAccess() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: async ({ ref, isEnabled }: { ref: ServiceRef; isEnabled: boolean }) => {
      const route = isEnabled ? routes.enableService : routes.disableService;
      await send(servicePath(route.path, ref), { method: 'PATCH' });
    },
    onSuccess: invalidate,
  });
}

export function useDeleteService() {
  const invalidate = useInvalidateServices();
  return useMutation({
    mutationFn: async (ref: ServiceRef) => {
      await send(servicePath(routes.deleteService.path, ref), { method: 'DELETE' });
    },
    onSuccess: invalidate,
  });
}
