// A list's view (page, page size, filter, search, sort) lives in the URL so Back returns to it and links can be
// shared. Checked by hand rather than with zod: this file is part of the router, on the first page's bundle.

export const PAGE_SIZES = [10, 25, 50, 100] as const;

const positiveInt = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 1_000_000 ? n : undefined;
};

const oneOf = <T extends string>(values: readonly T[], value: unknown): T | undefined =>
  values.includes(value as T) ? (value as T) : undefined;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.slice(0, 253) : undefined;

export interface PagedSearch {
  page?: number | undefined;
  limit?: number | undefined;
  q?: string | undefined;
}

/** Unknown or malformed values are dropped (the default view), never an error page. */
export function validatePagedSearch(search: Record<string, unknown>): PagedSearch {
  const limit = positiveInt(search.limit);
  return {
    page: positiveInt(search.page),
    limit: limit !== undefined && (PAGE_SIZES as readonly number[]).includes(limit) ? limit : undefined,
    q: text(search.q),
  };
}

export const NODE_SORT_KEYS = ['name', 'status', 'handshake', 'traffic'] as const;
export type NodeSortKey = (typeof NODE_SORT_KEYS)[number];

export interface NodesSearch extends PagedSearch {
  type?: 'nodes' | 'gateways' | undefined;
  sort?: NodeSortKey | undefined;
  order?: 'asc' | 'desc' | undefined;
}

export function validateNodesSearch(search: Record<string, unknown>): NodesSearch {
  return {
    ...validatePagedSearch(search),
    type: oneOf(['nodes', 'gateways'], search.type),
    sort: oneOf(NODE_SORT_KEYS, search.sort),
    order: oneOf(['asc', 'desc'], search.order),
  };
}
