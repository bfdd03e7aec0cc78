import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { domainOptionsQueryOptions } from '../../queries/domains';

/** Suggestions for the service forms' domain field: the known domains containing the typed text. */
export function useDomainSuggestions(): (query: string) => Promise<string[]> {
  const queryClient = useQueryClient();
  return useCallback(
    async (query: string) => {
      const { data } = await queryClient.query(domainOptionsQueryOptions());
      const needle = query.trim().toLowerCase();
      return data.map((domain) => domain.domain).filter((name) => name.includes(needle));
    },
    [queryClient],
  );
}
