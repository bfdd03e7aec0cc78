import type { FastifyInstance } from 'fastify';
import { DRIFT_EVENT, HEALTH_EVENT, operations, type ServiceFigures } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { bearerOf, requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import { listOpenSse, openSse } from '../../sse.js';
import { getService } from '../services/service.js';
import { createAttentionReader } from './attention.js';
import { isMetricsToken } from './metrics.js';
import type { Observer } from './observer.js';
import { listServiceRefs, listServiceRefsOf, updateHealthCheckSettings } from './service.js';

export async function observeRoutes(app: FastifyInstance, opts: { deps: AppDeps; observer: Observer }): Promise<void> {
  const { deps, observer } = opts;
  observer.metrics.countSubscribers = () => listOpenSse(app.server).length;

  registerOperation(app, operations.serviceTraffic, async (request) => {
    const { nodeId, type, id } = request.params;
    await getService(deps, nodeId, type, id);
    return observer.history.serviceTraffic(type, id, request.query.minutes);
  });

  registerOperation(app, operations.updateHealthCheck, async (request) => {
    const { nodeId, type, id } = request.params;
    await getService(deps, nodeId, type, id);
    const settings = await updateHealthCheckSettings(deps, { nodeId, type, id }, request.body);
    await observer.health.refresh();
    return (
      (await observer.health.get(type, id)) ?? {
        type,
        id,
        nodeId,
        state: 'unknown' as const,
        since: null,
        lastCheckedAt: null,
        lastError: null,
        latencyMs: null,
        ...settings,
      }
    );
  });

  registerOperation(app, operations.serviceFigures, async (request) => {
    const { nodeId, type, services } = request.query;
    // An account limited to some nodes gets its nodes' services' figures only (docs/api.md "Node scope").
    const { nodeScope } = requireSession(request);
    const named = services === undefined ? null : new Set(services.split(','));
    const figures = await observer.history.rowFigures();
    const health = new Map((await observer.health.list()).map((h) => [`${h.type}:${h.id}`, h]));
    const rows = named === null ? await listServiceRefs(deps) : await listServiceRefsOf(deps, [...named]);
    const data: ServiceFigures[] = rows
      .filter(
        (row) =>
          (nodeId === undefined || row.nodeId === nodeId) &&
          (nodeScope === null || nodeScope.includes(row.nodeId)) &&
          (type === undefined || row.type === type) &&
          (named === null || named.has(`${row.type}:${row.id}`)),
      )
      .map((row) => {
        const key = `${row.type}:${row.id}`;
        const f = figures.get(key);
        return {
          ...row,
          requests: f?.requests ?? 0,
          errors: f?.errors ?? 0,
          bytes: f?.bytes ?? 0,
          spark: f?.spark ?? [],
          errorSpark: f?.errorSpark ?? [],
          health: health.get(key) ?? null,
        };
      });
    return { data };
  });

  registerOperation(app, operations.systemStatus, async () => {
    const counts = { up: 0, down: 0, unknown: 0 };
    for (const health of await observer.health.list()) counts[health.state]++;
    return {
      drift: deps.dataPlane.lastDrift(),
      dictionaries: await deps.dataPlane.dictionaries(),
      health: counts,
      traffic: await observer.history.totals(),
    };
  });

  const attention = createAttentionReader(deps, observer.health);
  app.addHook('onClose', async () => attention.stop());
  registerOperation(app, operations.attention, async () => await attention.read());

  registerOperation(app, operations.observeStream, async (request, reply) => {
    const connection = openSse(request, reply);
    const stopHealth = observer.health.onHealthChange(({ health }) =>
      connection.sendJson(JSON.stringify(health), HEALTH_EVENT),
    );
    const stopDrift = deps.dataPlane.onDrift((report) => connection.sendJson(JSON.stringify(report), DRIFT_EVENT));
    await connection.closed;
    stopHealth();
    stopDrift();
  });
}

/**
 * `GET /metrics` on the app: with `POSTERN_METRICS_TOKEN` set, only with `Authorization: Bearer <token>`; without it
 * a 404 (the metrics are then served on `POSTERN_METRICS_ADDRESS` only, or not at all), never the console's page.
 * Outside /api on purpose: the token is the metrics token, never a console session.
 */
export function registerMetricsRoute(app: FastifyInstance, observer: Observer, token: string | undefined): void {
  app.get('/metrics', async (request, reply) => {
    if (token === undefined) {
      return reply.code(404).header('cache-control', 'no-store').send({ message: 'Not Found', code: 'not_found' });
    }
    if (!isMetricsToken(bearerOf(request.headers.authorization), token)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .header('cache-control', 'no-store')
        .send({ message: 'Unauthorized' });
    }
    const text = await observer.metrics.render();
    return reply
      .header('content-type', observer.metrics.registry.contentType)
      .header('cache-control', 'no-store')
      .send(text);
  });
}
