import {
  operations,
  type AcmeCaCreate,
  type AcmeCaUpdate,
  type DnsProviderCreate,
  type DnsProviderUpdate,
} from '@postern/contract';
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call } from '../lib/api';
import { domainKeys } from './domains';

// Certificates for real setups (docs/api.md "Certificates"): the certificates view and "renew now", the DNS providers
// and the ACME certificate authorities. No answer carries a secret: the forms only ever send them.

export const certificateKeys = {
  all: ['certificates'] as const,
  list: ['certificates', 'list'] as const,
  dnsProviders: ['certificates', 'dns-providers'] as const,
  authorities: ['certificates', 'authorities'] as const,
};

export const certificateListQueryOptions = () =>
  queryOptions({
    queryKey: certificateKeys.list,
    queryFn: ({ signal }) => call(operations.listCertificates, { signal }),
  });

export const dnsProvidersQueryOptions = () =>
  queryOptions({
    queryKey: certificateKeys.dnsProviders,
    queryFn: ({ signal }) => call(operations.listDnsProviders, { signal }),
  });

export const acmeCasQueryOptions = () =>
  queryOptions({
    queryKey: certificateKeys.authorities,
    queryFn: ({ signal }) => call(operations.listAcmeCas, { signal }),
  });

/** Any change here may change what the certificates view and the domains list say. */
function useRefreshCertificates() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: certificateKeys.all }),
      queryClient.invalidateQueries({ queryKey: domainKeys.all }),
    ]);
}

export function useRenewCertificate() {
  const refresh = useRefreshCertificates();
  return useMutation({
    mutationFn: (domainId: number) => call(operations.renewCertificate, { params: { id: domainId } }),
    onSettled: refresh,
  });
}

export function useSaveDnsProvider() {
  const refresh = useRefreshCertificates();
  return useMutation({
    mutationFn: ({ id, body }: { id?: number; body: DnsProviderCreate | DnsProviderUpdate }) =>
      id === undefined
        ? call(operations.createDnsProvider, { body: body as DnsProviderCreate })
        : call(operations.updateDnsProvider, { params: { id }, body }),
    onSuccess: refresh,
  });
}

export function useDeleteDnsProvider() {
  const refresh = useRefreshCertificates();
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteDnsProvider, { params: { id } }),
    onSettled: refresh,
  });
}

export function useSaveAcmeCa() {
  const refresh = useRefreshCertificates();
  return useMutation({
    mutationFn: ({ id, body }: { id?: number; body: AcmeCaCreate | AcmeCaUpdate }) =>
      id === undefined
        ? call(operations.createAcmeCa, { body: body as AcmeCaCreate })
        : call(operations.updateAcmeCa, { params: { id }, body }),
    onSuccess: refresh,
  });
}

export function useDeleteAcmeCa() {
  const refresh = useRefreshCertificates();
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteAcmeCa, { params: { id } }),
    onSettled: refresh,
  });
}
