import { limits, operations, type CertificateUpload, type DomainCreate, type DomainUpdate } from '@postern/contract';
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call, isStoredButNotAppliedError } from '../lib/api';
import { observeKeys } from './observe-keys';
import { serviceKeys } from './services';

// Domains (the spec's "The calls it makes"). Every mutation invalidates by the `domains` prefix, never the whole cache.

export type DomainListParams = { page?: number; limit?: number; search?: string };

export const domainKeys = {
  all: ['domains'] as const,
  list: (params: DomainListParams) => [...domainKeys.all, 'list', params] as const,
};

export const domainListQueryOptions = (params: DomainListParams = {}) =>
  queryOptions({
    queryKey: domainKeys.list(params),
    queryFn: ({ signal }) => call(operations.listDomains, { query: params, signal }),
    placeholderData: keepPreviousData,
  });

/** Every domain for the service form's autocomplete (one page of the API's maximum size). */
export const domainOptionsQueryOptions = () => domainListQueryOptions({ page: 1, limit: limits.listMaxLimit });

/** A change stored but not applied is shown as stored: refresh after it as after a success. */
const refreshIfStored =
  (refresh: () => Promise<unknown>) =>
  async (error: Error): Promise<void> => {
    if (isStoredButNotAppliedError(error)) await refresh();
  };

export function useCreateDomain() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: DomainCreate) => call(operations.createDomain, { body }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: domainKeys.all }),
        queryClient.invalidateQueries({ queryKey: observeKeys.attention }),
      ]),
    onError: refreshIfStored(() => queryClient.invalidateQueries({ queryKey: domainKeys.all })),
  });
}

export function useUpdateDomain() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: DomainUpdate }) =>
      call(operations.updateDomain, { params: { id }, body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: domainKeys.all }),
    onError: refreshIfStored(() => queryClient.invalidateQueries({ queryKey: domainKeys.all })),
  });
}

export function useDeleteDomain() {
  const queryClient = useQueryClient();
  const refreshAll = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: domainKeys.all }),
      queryClient.invalidateQueries({ queryKey: serviceKeys.all }),
      queryClient.invalidateQueries({ queryKey: observeKeys.attention }),
    ]);
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteDomain, { params: { id } }),
    // A service's public URL and certificate mode follow its domain, so service lists are stale too.
    onSuccess: () => refreshAll(),
    onError: refreshIfStored(() => refreshAll()),
  });
}

/** The operator's own certificate for a domain (docs/api.md "Certificates"): checked by the server, 422 per field. */
export function useUploadCertificate() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: CertificateUpload }) =>
      call(operations.uploadCertificate, { params: { id }, body }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: domainKeys.all }),
        queryClient.invalidateQueries({ queryKey: observeKeys.attention }),
      ]),
    onError: refreshIfStored(() => queryClient.invalidateQueries({ queryKey: domainKeys.all })),
  });
}
