// A list's view (page, page size, filter, search, sort) lives in the URL so Back returns to it and links can be
// shared. Checked by hand rather than with zod: this file is part of the router, on the first page's bundle.

export const PAGE_SIZES = [10, 25, 50, 100] as const;

const positiveInt = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 1_000_000 ? n : undefined;
};

const oneOf = <T extends string>(values: readonly T[], value: unknown): T | undefined =>
  values.includes(value as T) ? (value as T) : undefined;

/** The router reads `?q=1883` (a port, typed or pasted by hand) as a number: it is still the text searched for. */
const text = (value: unknown): string | undefined => {
  const string = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof string === 'string' && string.trim() !== '' ? string.slice(0, 253) : undefined;
};

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

// ---- Service tables ----------------------------------------------------------------------------

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
/**
 * The node page holds two tables, so each one's view has its own keys: httpQ, httpPage, …, tcpOrder. A page with
 * several pairs of tables gives each pair a prefix (the domains list: `d12.httpQ` for the row of domain 12).
 */
const viewKey = (kind: ServiceTableKind, field: (typeof VIEW_FIELDS)[number], prefix = '') =>
  `${prefix}${kind}${field.charAt(0).toUpperCase()}${field.slice(1)}`;

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

export function serviceViewFromSearch(
  search: Record<string, unknown>,
  kind: ServiceTableKind,
  prefix = '',
): ServiceListView {
  return validateServiceView(
    Object.fromEntries(VIEW_FIELDS.map((field) => [field, search[viewKey(kind, field, prefix)]])),
  );
}

export function serviceViewToSearch(
  view: Partial<ServiceListView>,
  kind: ServiceTableKind,
  prefix = '',
): NodeDetailSearch {
  return Object.fromEntries(
    Object.entries(view).map(([field, value]) => [viewKey(kind, field as (typeof VIEW_FIELDS)[number], prefix), value]),
  );
}

/** A service named in a URL (`http:12`): the node page opens its Info (Ctrl+K's service results, the home page). */
export type ServiceKey = { type: 'http' | 'tcp'; id: number };

export function parseServiceKey(value: unknown): ServiceKey | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(http|tcp):([1-9]\d{0,15})$/.exec(value);
  if (!match) return undefined;
  return { type: match[1] === 'tcp' ? 'tcp' : 'http', id: Number(match[2]) };
}

/** The node page's search: the views of its HTTP and TCP tables, and the service whose Info is open. */
export function validateNodeDetailSearch(search: Record<string, unknown>): NodeDetailSearch {
  const service = parseServiceKey(search.service);
  return {
    ...serviceViewToSearch(serviceViewFromSearch(search, 'http'), 'http'),
    ...serviceViewToSearch(serviceViewFromSearch(search, 'tcp'), 'tcp'),
    service: service ? `${service.type}:${String(service.id)}` : undefined,
  };
}

/** The search that opens a service on its node's page: its table searched for its name, its Info open. */
export function serviceOnNodeSearch(service: ServiceKey & { name: string }): NodeDetailSearch {
  return { [`${service.type}Q`]: service.name, service: `${service.type}:${String(service.id)}` };
}

// ---- Services overview ---------------------------------------------------------------------------

export const OVERVIEW_KINDS = ['http', 'tcp', 'udp'] as const;
export const OVERVIEW_STATUSES = [
  'public',
  'disabled',
  'set-aside',
  'node-offline',
  'backend-down',
  'certificate-failed',
] as const;
export const OVERVIEW_SORTS = ['name', 'node', 'kind', 'status'] as const;
export type OverviewSort = (typeof OVERVIEW_SORTS)[number];

export interface ServicesSearch extends PagedSearch {
  kind?: (typeof OVERVIEW_KINDS)[number] | undefined;
  status?: (typeof OVERVIEW_STATUSES)[number] | undefined;
  node?: number | undefined;
  domain?: string | undefined;
  sort?: OverviewSort | undefined;
  order?: 'asc' | 'desc' | undefined;
}

/** /services: search, filters, sort and paging; anything malformed is dropped (the whole list). */
export function validateServicesSearch(search: Record<string, unknown>): ServicesSearch {
  return {
    ...validatePagedSearch(search),
    kind: oneOf(OVERVIEW_KINDS, search.kind),
    status: oneOf(OVERVIEW_STATUSES, search.status),
    node: positiveInt(search.node),
    domain: text(search.domain),
    sort: oneOf(OVERVIEW_SORTS, search.sort),
    order: oneOf(['asc', 'desc'], search.order),
  };
}

// ---- Domains list: expanded rows and their service tables ----------------------------------------------------

/** More open rows than a page of domains can show is never a real view. */
const MAX_OPEN_DOMAINS = 100;

/** The keys of an expanded domain row's tables: `d12.httpQ`, …, `d12.tcpOrder`. */
export const domainViewPrefix = (domainId: number) => `d${String(domainId)}.`;

/**
 * The expanded rows' domain ids, from `open=12` or `open=12,15` (the router reads a lone number as a number, a list
 * as a string).
 */
export function openDomainIds(search: Record<string, unknown>): number[] {
  const raw = search.open;
  const parts = typeof raw === 'number' ? [raw] : typeof raw === 'string' ? raw.split(',') : [];
  const ids = parts.map(positiveInt).filter((id): id is number => id !== undefined);
  return [...new Set(ids)].slice(0, MAX_OPEN_DOMAINS);
}

/** `open` as the URL writes it: a lone id as a number (`open=12`), several joined (`open=12,15`). */
export function openDomainIdsToSearch(ids: readonly number[]): number | string | undefined {
  return ids.length === 0 ? undefined : ids.length === 1 ? ids[0] : ids.join(',');
}

export type DomainsSearch = PagedSearch & Record<string, string | number | undefined>;

/** The domains list's search: its own page, size and search, the expanded rows, and each open row's two tables. */
export function validateDomainsSearch(search: Record<string, unknown>): DomainsSearch {
  const open = openDomainIds(search);
  const views: NodeDetailSearch = {};
  for (const id of open) {
    for (const kind of ['http', 'tcp'] as const) {
      const prefix = domainViewPrefix(id);
      Object.assign(views, serviceViewToSearch(serviceViewFromSearch(search, kind, prefix), kind, prefix));
    }
  }
  return { ...validatePagedSearch(search), open: openDomainIdsToSearch(open), ...views };
}
