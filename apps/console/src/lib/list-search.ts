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

// ---- Service tables (issue 17) ----------------------------------------------------------------------------

export const SERVICE_PAGE_SIZES = [5, 10, 25, 50] as const;
export const SERVICE_SORT_KEYS = ['name', 'status'] as const;
export type ServiceSortKey = (typeof SERVICE_SORT_KEYS)[number];

/** One service table's view: search, page, page size and sort. */
export interface ServiceListView {
  q?: string | undefined;
  page?: number | undefined;
  limit?: number | undefined;
  sort?: ServiceSortKey | undefined;
  order?: 'asc' | 'desc' | undefined;
}

type ServiceTableKind = 'http' | 'tcp';
export type NodeDetailSearch = Record<string, string | number | undefined>;
const VIEW_FIELDS = ['q', 'page', 'limit', 'sort', 'order'] as const;
/** The node page holds two tables, so each one's view has its own keys: httpQ, httpPage, …, tcpOrder. */
const viewKey = (kind: ServiceTableKind, field: (typeof VIEW_FIELDS)[number]) =>
  `${kind}${field.charAt(0).toUpperCase()}${field.slice(1)}`;

function validateServiceView(view: Record<string, unknown>): ServiceListView {
  const limit = positiveInt(view.limit);
  return {
    q: text(view.q),
    page: positiveInt(view.page),
    limit: limit !== undefined && (SERVICE_PAGE_SIZES as readonly number[]).includes(limit) ? limit : undefined,
    sort: oneOf(SERVICE_SORT_KEYS, view.sort),
    order: oneOf(['asc', 'desc'], view.order),
  };
}

export function serviceViewFromSearch(search: Record<string, unknown>, kind: ServiceTableKind): ServiceListView {
  return validateServiceView(Object.fromEntries(VIEW_FIELDS.map((field) => [field, search[viewKey(kind, field)]])));
}

export function serviceViewToSearch(view: Partial<ServiceListView>, kind: ServiceTableKind): NodeDetailSearch {
  return Object.fromEntries(
    Object.entries(view).map(([field, value]) => [viewKey(kind, field as (typeof VIEW_FIELDS)[number]), value]),
  );
}

/** The node page's search: the views of its HTTP and TCP tables. */
export function validateNodeDetailSearch(search: Record<string, unknown>): NodeDetailSearch {
  return {
    ...serviceViewToSearch(serviceViewFromSearch(search, 'http'), 'http'),
    ...serviceViewToSearch(serviceViewFromSearch(search, 'tcp'), 'tcp'),
  };
}
