import {
  defaults,
  limits,
  operations,
  type DomainAccessUpdate,
  type IdentityProviderCreate,
  type IdentityProviderUpdate,
  type ServiceAccessUpdate,
  type ShareLinkCreate,
} from '@postern/contract';
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call } from '../lib/api';
import { showToast } from '../lib/toast-store';

// Who may reach a published service (docs/ACCESS.md; beyond the console spec): identity providers, the access
// policies of domains and HTTP services, share links and visitor sessions. Everything is keyed under `access`;
// a change invalidates the narrowest prefix that can show it.

/** The HTTP service a policy, share link or session belongs to. */
export type HttpServiceRef = { nodeId: number; id: number };

export const ACCESS_PAGE_SIZE = defaults.cardPageSize;

export const accessKeys = {
  all: ['access'] as const,
  providers: () => [...accessKeys.all, 'providers'] as const,
  providerList: (page: number, limit: number) => [...accessKeys.providers(), { page, limit }] as const,
  domain: (domainId: number) => [...accessKeys.all, 'domain', domainId] as const,
  service: (ref: HttpServiceRef) => [...accessKeys.all, 'service', ref.nodeId, ref.id] as const,
  shareLinks: (ref: HttpServiceRef) => [...accessKeys.service(ref), 'share-links'] as const,
  shareLinkPage: (ref: HttpServiceRef, page: number) => [...accessKeys.shareLinks(ref), page] as const,
  sessions: (ref: HttpServiceRef) => [...accessKeys.service(ref), 'sessions'] as const,
  sessionPage: (ref: HttpServiceRef, page: number) => [...accessKeys.sessions(ref), page] as const,
};

export const identityProvidersQueryOptions = (page = 1, limit: number = defaults.pageSize) =>
  queryOptions({
    queryKey: accessKeys.providerList(page, limit),
    queryFn: ({ signal }) => call(operations.listIdentityProviders, { query: { page, limit }, signal }),
    placeholderData: keepPreviousData,
  });

/** Every provider, for the provider select of the Access section (one page of the API's maximum size). */
export const allIdentityProvidersQueryOptions = () => identityProvidersQueryOptions(1, limits.listMaxLimit);

export const domainAccessQueryOptions = (domainId: number) =>
  queryOptions({
    queryKey: accessKeys.domain(domainId),
    queryFn: ({ signal }) => call(operations.getDomainAccess, { params: { id: domainId }, signal }),
  });

export const serviceAccessQueryOptions = (ref: HttpServiceRef) =>
  queryOptions({
    queryKey: accessKeys.service(ref),
    queryFn: ({ signal }) => call(operations.getServiceAccess, { params: ref, signal }),
  });

export const shareLinkListQueryOptions = (ref: HttpServiceRef, page: number) =>
  queryOptions({
    queryKey: accessKeys.shareLinkPage(ref, page),
    queryFn: ({ signal }) =>
      call(operations.listShareLinks, { params: ref, query: { page, limit: ACCESS_PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });

/** Visitors come and go outside the console: the list is read again whenever it is shown. */
export const visitorSessionListQueryOptions = (ref: HttpServiceRef, page: number) =>
  queryOptions({
    queryKey: accessKeys.sessionPage(ref, page),
    queryFn: ({ signal }) =>
      call(operations.listVisitorSessions, { params: ref, query: { page, limit: ACCESS_PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
    staleTime: 0,
  });

// ---- Changes ------------------------------------------------------------------------------------------------

/**
 * Saves a domain's policy. Every service view may show it (inherited), so service views are refreshed as well;
 * sessions too, since a narrower policy revokes some.
 */
export async function saveDomainAccess(
  queryClient: ReturnType<typeof useQueryClient>,
  domainId: number,
  body: DomainAccessUpdate,
) {
  try {
    return await call(operations.updateDomainAccess, { params: { id: domainId }, body });
  } finally {
    await queryClient.invalidateQueries({ queryKey: accessKeys.all });
  }
}

export async function saveServiceAccess(
  queryClient: ReturnType<typeof useQueryClient>,
  ref: HttpServiceRef,
  body: ServiceAccessUpdate,
) {
  try {
    return await call(operations.updateServiceAccess, { params: ref, body });
  } finally {
    await queryClient.invalidateQueries({ queryKey: accessKeys.service(ref) });
  }
}

export function useCreateIdentityProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: IdentityProviderCreate) => call(operations.createIdentityProvider, { body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accessKeys.providers() }),
  });
}

export function useUpdateIdentityProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: IdentityProviderUpdate }) =>
      call(operations.updateIdentityProvider, { params: { id }, body }),
    // Policies show the provider's name.
    onSettled: () => queryClient.invalidateQueries({ queryKey: accessKeys.all }),
  });
}

export function useDeleteIdentityProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => call(operations.deleteIdentityProvider, { params: { id } }),
    onSuccess: () => {
      showToast({ message: 'Identity provider deleted', type: 'success' });
      return queryClient.invalidateQueries({ queryKey: accessKeys.providers() });
    },
  });
}

/** "Test connection": discovery through the gateway (nothing cached; a 422 on `issuer` says why it failed). */
export function useDiscoverIdentityProvider() {
  return useMutation({
    mutationFn: (issuer: string) => call(operations.discoverIdentityProvider, { body: { issuer } }),
  });
}

export function useCreateShareLink(ref: HttpServiceRef) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ShareLinkCreate) => call(operations.createShareLink, { params: ref, body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accessKeys.shareLinks(ref) }),
  });
}

export function useRevokeShareLink(ref: HttpServiceRef) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (linkId: number) => call(operations.revokeShareLink, { params: { ...ref, linkId } }),
    // Revoking a link ends the sessions made with it.
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: accessKeys.shareLinks(ref) }),
        queryClient.invalidateQueries({ queryKey: accessKeys.sessions(ref) }),
      ]),
    onSuccess: () => showToast({ message: 'Share link revoked', type: 'success' }),
  });
}

export function useRevokeVisitorSession(ref: HttpServiceRef) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (sessionId: number) => call(operations.revokeVisitorSession, { params: { ...ref, sessionId } }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: accessKeys.sessions(ref) }),
    onSuccess: () => showToast({ message: 'Visitor session ended', type: 'success' }),
  });
}
