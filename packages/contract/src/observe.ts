import { z } from 'zod';
import { ServiceTypeSchema } from './entities.js';
import { integerIn } from './fields.js';

// What the gateway observes (docs/api.md "Observability"): traffic per service, backend health and the drift check.
// Beyond the console spec; docs/api.md records the shapes.

/** Traffic is kept at one-minute resolution for this many minutes (24 h). */
export const TRAFFIC_HISTORY_MINUTES = 1440;
/** The window of the figures on service rows and of a summary by default (the last hour). */
export const TRAFFIC_RECENT_MINUTES = 60;
/** Health checks: default and bounds of a service's interval and timeout, in seconds. */
export const HEALTH_CHECK_DEFAULTS = { intervalSeconds: 30, timeoutSeconds: 5 } as const;
export const HEALTH_CHECK_LIMITS = { intervalMin: 5, intervalMax: 3600, timeoutMin: 1, timeoutMax: 60 } as const;

/**
 * One minute of one service (or of all of them): HTTP requests or TCP/UDP connections that ended in it, errors
 * (HTTP 5xx, failed connections), bytes, and for HTTP the minute's latency quantiles (null: no request).
 */
export const TrafficPointSchema = z.object({
  /** Start of the minute, ISO 8601. */
  minute: z.string(),
  requests: z.number(),
  errors: z.number(),
  bytesIn: z.number(),
  bytesOut: z.number(),
  p50Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
});
export type TrafficPoint = z.infer<typeof TrafficPointSchema>;

export const HttpTrafficSummarySchema = z.object({
  type: z.literal('http'),
  minutes: z.number().int(),
  requests: z.number(),
  /** Requests by status class. */
  status: z.object({ '1xx': z.number(), '2xx': z.number(), '3xx': z.number(), '4xx': z.number(), '5xx': z.number() }),
  bytesIn: z.number(),
  bytesOut: z.number(),
  /** Latency quantiles from nginx's buckets (upper bound of the bucket they fall in); null: no request. */
  p50Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
  /** Requests in flight now. */
  open: z.number(),
});
export const TcpTrafficSummarySchema = z.object({
  type: z.literal('tcp'),
  minutes: z.number().int(),
  /** Connections (UDP: sessions) that ended in the window. */
  connections: z.number(),
  failed: z.number(),
  bytesIn: z.number(),
  bytesOut: z.number(),
  /** Mean duration of those connections; null: none. */
  avgDurationSeconds: z.number().nullable(),
  /** TCP connections open now. */
  open: z.number(),
});
export const TrafficSummarySchema = z.discriminatedUnion('type', [HttpTrafficSummarySchema, TcpTrafficSummarySchema]);
export type TrafficSummary = z.infer<typeof TrafficSummarySchema>;

export const ServiceTrafficSchema = z.object({
  summary: TrafficSummarySchema,
  /** One point per minute, oldest first, the current (partial) minute last. */
  points: z.array(TrafficPointSchema),
});
export type ServiceTraffic = z.infer<typeof ServiceTrafficSchema>;

export const HealthStateSchema = z.enum(['up', 'down', 'unknown']);
export type HealthState = z.infer<typeof HealthStateSchema>;

/** A service's backend as the gateway's checks see it through the tunnel. */
export const ServiceHealthSchema = z.object({
  type: ServiceTypeSchema,
  id: z.number().int(),
  nodeId: z.number().int(),
  /** `unknown`: not checked yet, or not checkable (UDP, disabled). */
  state: HealthStateSchema,
  /** When the state began (ISO 8601); null: unknown. */
  since: z.string().nullable(),
  lastCheckedAt: z.string().nullable(),
  /** Why the last check failed; null when it succeeded. */
  lastError: z.string().nullable(),
  latencyMs: z.number().nullable(),
  intervalSeconds: z.number().int(),
  timeoutSeconds: z.number().int(),
});
export type ServiceHealth = z.infer<typeof ServiceHealthSchema>;

/** What a service row shows: the last hour's traffic, a per-minute sparkline and the backend's health. */
export const ServiceFiguresSchema = z.object({
  type: ServiceTypeSchema,
  id: z.number().int(),
  nodeId: z.number().int(),
  /** Requests (TCP/UDP: connections) in the last hour. */
  requests: z.number(),
  errors: z.number(),
  bytes: z.number(),
  /** Requests per minute over the last hour, oldest first; the last is the current minute, not finished yet. */
  spark: z.array(z.number()),
  /**
   * Errors (HTTP 5xx, failed connections) per minute, aligned with `spark`. Optional so a client reads the answers
   * of a gateway from before it existed.
   */
  errorSpark: z.array(z.number()).optional(),
  health: ServiceHealthSchema.nullable(),
});
export type ServiceFigures = z.infer<typeof ServiceFiguresSchema>;
export const ServiceFiguresListSchema = z.object({ data: z.array(ServiceFiguresSchema) });

/** At most this many services named in one `services` filter (a page of the services overview). */
export const FIGURES_SERVICES_MAX = 100;

export const ServiceFiguresQuerySchema = z.object({
  nodeId: integerIn(1, Number.MAX_SAFE_INTEGER).optional(),
  type: ServiceTypeSchema.optional(),
  /** Only these services: `http:12,tcp:3` (the rows of one page). */
  services: z
    .string()
    .regex(/^(http|tcp):[1-9]\d{0,15}(,(http|tcp):[1-9]\d{0,15})*$/, 'This field must list services as http:12,tcp:3')
    .refine((value) => value.split(',').length <= FIGURES_SERVICES_MAX, `At most ${FIGURES_SERVICES_MAX} services`)
    .optional(),
});

export const TrafficQuerySchema = z.object({
  minutes: integerIn(1, TRAFFIC_HISTORY_MINUTES).optional().default(TRAFFIC_RECENT_MINUTES),
});

export const DriftStatusSchema = z.object({
  checkedAt: z.string(),
  /** What nginx or WireGuard served that differed from the database; empty: they agreed. */
  differences: z.array(z.string()),
  repaired: z.boolean(),
});
export type DriftStatus = z.infer<typeof DriftStatusSchema>;

/** One of nginx's shared dictionaries (routes, certificates, ACME answers, open requests, traffic counters). */
export const DictionaryStatusSchema = z.object({
  name: z.string(),
  capacityBytes: z.number(),
  /** Whole free pages; entries of up to 2 KiB may still fit in pages in use. */
  freeBytes: z.number(),
  /** Writes refused for lack of room: pushes, requests that could not be tracked (503), counter updates. */
  refusedWrites: z.number(),
});
export type DictionaryStatus = z.infer<typeof DictionaryStatusSchema>;

/** The home page's figures and the system status panel. */
export const SystemStatusSchema = z.object({
  /** The last drift check; null: none has run yet. */
  drift: DriftStatusSchema.nullable(),
  /** How full nginx's shared dictionaries are; null when nginx cannot be asked (data plane off or down). */
  dictionaries: z.array(DictionaryStatusSchema).nullable().optional(),
  health: z.object({ up: z.number(), down: z.number(), unknown: z.number() }),
  traffic: z.object({
    minutes: z.number().int(),
    requests: z.number(),
    errors: z.number(),
    connections: z.number(),
    bytesIn: z.number(),
    bytesOut: z.number(),
    /** Every service summed, one point per 10 minutes, oldest first. */
    points: z.array(TrafficPointSchema),
  }),
});
export type SystemStatus = z.infer<typeof SystemStatusSchema>;

export const HealthCheckUpdateSchema = z.object({
  intervalSeconds: integerIn(HEALTH_CHECK_LIMITS.intervalMin, HEALTH_CHECK_LIMITS.intervalMax).optional(),
  timeoutSeconds: integerIn(HEALTH_CHECK_LIMITS.timeoutMin, HEALTH_CHECK_LIMITS.timeoutMax).optional(),
});
export type HealthCheckUpdate = z.infer<typeof HealthCheckUpdateSchema>;

/** /api/observe/stream: a service's health changed (named event `health`) or a drift check ran (`drift`). */
export const HEALTH_EVENT = 'health';
export const DRIFT_EVENT = 'drift';

/** The session's token arrives as `?token=` (EventSource cannot send headers); it is no filter. */
export const ObserveStreamQuerySchema = z.object({ token: z.string().min(1) });
