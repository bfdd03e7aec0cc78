import type { ListResponse, PersonalAccessToken, TokenCreate } from '@postern/contract';
import { defaults, operations } from '@postern/contract';
import { keepPreviousData, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { call } from '../lib/api';
import { showToast } from '../lib/toast-store';
import { t } from '../i18n/i18n';

// Personal access tokens of one node (the spec's "Screens and routes" "Node Access Tokens"); the table pages by 5.

export const TOKEN_PAGE_SIZE = defaults.cardPageSize;

export const tokenKeys = {
  all: ['tokens'] as const,
  lists: (nodeId: number) => [...tokenKeys.all, nodeId, 'list'] as const,
  list: (nodeId: number, page: number) => [...tokenKeys.lists(nodeId), { page, limit: TOKEN_PAGE_SIZE }] as const,
};

export const tokenListQueryOptions = (nodeId: number, page: number) =>
  queryOptions({
    queryKey: tokenKeys.list(nodeId, page),
    queryFn: ({ signal }) =>
      call(operations.listTokens, { params: { id: nodeId }, query: { page, limit: TOKEN_PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });

function mapTokenRows(
  list: ListResponse<PersonalAccessToken> | undefined,
  map: (rows: PersonalAccessToken[]) => PersonalAccessToken[],
) {
  return list && { ...list, data: map(list.data) };
}

export function useCreateToken(nodeId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: TokenCreate) => call(operations.createToken, { params: { id: nodeId }, body }),
    // The new token joins the table; refetching keeps paging and totals right.
    onSuccess: async () => queryClient.invalidateQueries({ queryKey: tokenKeys.lists(nodeId) }),
  });
}

export function useRevokeToken(nodeId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: number) => call(operations.revokeToken, { params: { id: nodeId, tokenId } }),
    onSuccess: (token) => {
      queryClient.setQueriesData<ListResponse<PersonalAccessToken>>({ queryKey: tokenKeys.lists(nodeId) }, (list) =>
        mapTokenRows(list, (rows) => rows.map((row) => (row.id === token.id ? { ...token, revoked: true } : row))),
      );
      showToast({ message: t('tokens.toast.revoked'), type: 'success' });
    },
  });
}

export function useDeleteToken(nodeId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: number) => call(operations.deleteToken, { params: { id: nodeId, tokenId } }),
    onSuccess: async (_, tokenId) => {
      queryClient.setQueriesData<ListResponse<PersonalAccessToken>>({ queryKey: tokenKeys.lists(nodeId) }, (list) =>
        mapTokenRows(list, (rows) => rows.filter((row) => row.id !== tokenId)),
      );
      showToast({ message: t('tokens.toast.deleted'), type: 'success' });
      await queryClient.invalidateQueries({ queryKey: tokenKeys.lists(nodeId) });
    },
  });
}
