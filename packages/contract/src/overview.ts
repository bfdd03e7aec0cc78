import { z } from 'zod';
import { CertificateStateSchema, NodeStatusSchema, ServiceTypeSchema, AnyServiceSchema } from './entities.js';
import { domainName, idValue, oneOf } from './fields.js';
import { DriftStatusSchema } from './observe.js';
import { listOf } from './envelopes.js';
import { PageQuerySchema, SORT_ORDERS } from './requests.js';

// The console for day 2: every published service across nodes in one list, and what needs attention.
// Beyond the console spec; docs/api.md "Services overview" and "Attention" record the shapes.

/** The kinds a service is filtered by: HTTP, or a TCP/UDP service by its protocol. */
export const SERVICE_KINDS = ['http', 'tcp', 'udp'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

/**
 * Status filters of the services overview. `public`: switched on, accepted by the data plane, its node connected;
 * `disabled`: switched off (or its node disconnected); `set-aside`: switched on but refused by the data plane
 * (applyError); `node-offline`: its node is connected but its tunnel is down; `backend-down`: the gateway's health
 * check fails; `certificate-failed`: its domain's certificate failed or has expired.
 */
export const SERVICE_STATUS_FILTERS = [
  'public',
  'disabled',
  'set-aside',
  'node-offline',
  'backend-down',
  'certificate-failed',
] as const;
export type ServiceStatusFilter = (typeof SERVICE_STATUS_FILTERS)[number];

export const SERVICE_OVERVIEW_SORTS = ['name', 'node', 'kind', 'status'] as const;
export type ServiceOverviewSort = (typeof SERVICE_OVERVIEW_SORTS)[number];

export const ServiceOverviewQuerySchema = PageQuerySchema.extend({
  /** Name, domain, path or public port contains it, case-insensitively. */
  q: z.string().trim().max(253).optional(),
  kind: oneOf(SERVICE_KINDS).optional(),
  status: oneOf(SERVICE_STATUS_FILTERS).optional(),
  nodeId: idValue().optional(),
  domain: domainName().optional(),
  sort: oneOf(SERVICE_OVERVIEW_SORTS).optional(),
  order: oneOf(SORT_ORDERS).optional(),
  /**
   * The `next` of the previous answer (by name only): the page starts after that row, and costs what the first page
   * costs however deep it is (`page` is then not read). Opaque to clients.
   */
  after: z.string().min(1).max(1024).optional(),
});
export type ServiceOverviewQuery = z.infer<typeof ServiceOverviewQuerySchema>;

/** The certificate a service is served with (its domain's), as far as a row needs it. */
export const ServiceCertificateSchema = z.object({
  state: CertificateStateSchema,
  notAfter: z.string().nullable(),
  error: z.string().nullable(),
});
export type ServiceCertificate = z.infer<typeof ServiceCertificateSchema>;

/** One row of the services overview: the service, what kind it is, and the facts that decide whether it is served. */
export const ServiceOverviewSchema = z.object({
  type: ServiceTypeSchema,
  node: z.object({
    id: z.number().int(),
    name: z.string(),
    status: NodeStatusSchema,
    enabled: z.boolean(),
    isLocal: z.boolean(),
  }),
  /** The certificate of its domain when it is served over TLS on one; null otherwise. */
  certificate: ServiceCertificateSchema.nullable(),
  service: AnyServiceSchema,
});
export type ServiceOverview = z.infer<typeof ServiceOverviewSchema>;

/** A page of the overview: the list answer, and by name a cursor to the next page (null: this page is the last). */
export const ServiceOverviewPageSchema = listOf(ServiceOverviewSchema).extend({
  next: z.string().nullable().optional(),
});
export type ServiceOverviewPage = z.infer<typeof ServiceOverviewPageSchema>;

/** Days before its end from which a certificate is listed as expiring (renewal starts at 30 days left). */
export const CERTIFICATE_EXPIRING_DAYS = 14;
/** Items listed per kind of attention; `total` counts them all. */
export const ATTENTION_MAX_ITEMS = 200;

const attentionList = <T extends z.ZodType>(item: T) => z.object({ total: z.number().int(), items: z.array(item) });

const ServiceRefSchema = z.object({
  type: ServiceTypeSchema,
  id: z.number().int(),
  nodeId: z.number().int(),
  name: z.string(),
  nodeName: z.string(),
});

/** The home page's "needs attention" and totals, and what service rows need to tell the truth about themselves. */
export const AttentionSchema = z.object({
  totals: z.object({
    /** Nodes other than the gateway's own local node. */
    nodes: z.number().int(),
    domains: z.number().int(),
    httpServices: z.number().int(),
    tcpServices: z.number().int(),
  }),
  /** Connected (enabled) nodes whose tunnel is down. */
  offlineNodes: attentionList(
    z.object({ id: z.number().int(), name: z.string(), latestHandshakeTimestamp: z.string().nullable() }),
  ),
  /** Nodes the operator disconnected: their services are not served. */
  disconnectedNodeIds: z.array(z.number().int()),
  backendsDown: attentionList(
    ServiceRefSchema.extend({ since: z.string().nullable(), lastError: z.string().nullable() }),
  ),
  certificates: attentionList(
    z.object({
      id: z.number().int(),
      domain: z.string(),
      problem: z.enum(['failed', 'expired', 'expiring']),
      notAfter: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
  /** Changes the data plane set aside (rows with applyError). */
  setAside: attentionList(ServiceRefSchema.extend({ applyError: z.string() })),
  drift: DriftStatusSchema.nullable(),
});
export type Attention = z.infer<typeof AttentionSchema>;
