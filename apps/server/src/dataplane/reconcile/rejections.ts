import type { DataPlanePlan } from '../plan.js';
import { noRejections, type DataPlaneLogger, type Rejections } from '../types.js';

// Rows set aside are bookkept here: the planner's (a value no validator accepts, two services on one path), then
// what the host refused while applying (a port in use, a network already routed). Every other row is served.

/** The rows the plan already set aside. */
export function rejectionsOf(plan: DataPlanePlan): Rejections {
  const rejected = noRejections();
  for (const [id, message] of plan.routes.rejected) rejected.http.set(id, message);
  for (const [id, message] of plan.streams.rejected) rejected.tcp.set(id, message);
  return rejected;
}

/** TCP/UDP instances that could not start, by instance key, as rejections of their services. */
export function rejectStreamFailures(
  rejected: Rejections,
  plan: DataPlanePlan,
  failures: ReadonlyMap<string, string>,
): void {
  for (const [key, message] of failures) {
    const serviceId = plan.streams.serviceOf.get(key);
    if (serviceId !== undefined) rejected.tcp.set(serviceId, message);
  }
}

/** A node may be set aside for several reasons at once (a subnet the gateway needs, a route the host refused). */
export function rejectPeers(rejected: Rejections, failures: ReadonlyMap<number, string>): void {
  for (const [nodeId, message] of failures) {
    const earlier = rejected.nodes.get(nodeId);
    rejected.nodes.set(nodeId, earlier === undefined ? message : `${earlier}; ${message}`);
  }
}

export function logRejections(logger: DataPlaneLogger, rejected: Rejections): void {
  for (const [kind, rows] of Object.entries(rejected) as [keyof Rejections, Map<number, string>][]) {
    for (const [id, message] of rows) logger.warn({ kind, id, message }, 'data plane: set aside a row it cannot apply');
  }
}
