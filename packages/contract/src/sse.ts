import { z } from 'zod';
import { NodeSchema } from './entities.js';
import { listOf } from './envelopes.js';

// Server-sent event payloads (the spec's "The calls it makes"). Each `data:` line carries one JSON value.

/** /api/nodes/stream list variant: the rows of the requested page, replacing the shown rows by id. */
export const NodeListEventSchema = z.array(NodeSchema);
/**
 * /api/nodes/stream list variant with `format=page` (beyond the spec, docs/api.md): each update is a named event
 * `page` carrying the whole list answer, `total` included, so a client needs no refetch when rows come or go.
 */
export const NODE_PAGE_EVENT = 'page';
export const NodeListPageEventSchema = listOf(NodeSchema);
export type NodeListPageEvent = z.infer<typeof NodeListPageEventSchema>;
/** /api/nodes/stream detail variant (`id`): the node, replacing the shown node. */
export const NodeDetailEventSchema = NodeSchema;
/** /api/logs/stream: a batch of lines, each starting with a level marker such as [INFO]. */
export const LogEventSchema = z.array(z.string());
export type LogEvent = z.infer<typeof LogEventSchema>;

export const LOG_LEVEL_MARKERS = ['[ERROR]', '[WARN]', '[WARNING]', '[INFO]', '[DEBUG]'] as const;
