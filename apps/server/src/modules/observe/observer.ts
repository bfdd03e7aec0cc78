import type { FastifyBaseLogger } from 'fastify';
import type { ApplyScope, DataPlane } from '../../dataplane/types.js';
import type { AppDeps } from '../../deps.js';
import { createHealthChecker, type HealthChecker, type Probe } from './health-checker.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createTrafficHistory, type TrafficHistory } from './traffic-history.js';

/**
 * What the gateway observes of itself (docs/api.md "Observability"): traffic history, backend health, metrics. One per
 * app.
 */
export interface Observer {
  history: TrafficHistory;
  health: HealthChecker;
  metrics: Metrics;
  start(): Promise<void>;
  stop(): void;
}

export interface ObserverOptions {
  /**
   * How backends are checked. Default: the real probe when the data plane is real; with the data plane off nothing is
   * checked (no tunnel to check through), unless a probe is given (tests).
   */
  healthProbe?: Probe;
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export function createObserver(
  deps: AppDeps,
  logger: FastifyBaseLogger | undefined,
  options: ObserverOptions = {},
): Observer {
  const history = createTrafficHistory({
    db: deps.db,
    dataPlane: deps.dataPlane,
    logger: logger ?? silent,
    now: () => deps.now().getTime(),
  });
  const isChecking = options.healthProbe !== undefined || deps.config.dataPlane === 'real';
  const health = createHealthChecker({ db: deps.db, ...(options.healthProbe ? { probe: options.healthProbe } : {}) });
  const metrics = createMetrics({ db: deps.db, dataPlane: deps.dataPlane, history, health, now: deps.now });
  let isStopped = false;
  return {
    history,
    health,
    metrics,
    async start() {
      await history.start();
      // Checking every backend at once competes with the boot's rebuild (at 10,000 services it tripled the boot):
      // the checks begin once the data plane serves what the DB says.
      if (isChecking)
        void deps.dataPlane.booted().then(() => {
          if (!isStopped) health.start();
        });
    },
    stop() {
      isStopped = true;
      history.stop();
      health.stop();
    },
  };
}

/** The data plane with every apply timed into the metrics (and the health targets read again after it). */
export function observeApply(dataPlane: DataPlane, observer: Observer): DataPlane {
  return new Proxy(dataPlane, {
    get(target, property, receiver) {
      if (property !== 'apply') return Reflect.get(target, property, receiver) as unknown;
      return async (scope?: ApplyScope) => {
        const stop = observer.metrics.applyDuration.startTimer();
        try {
          const result = await target.apply(scope);
          stop({ result: result.ok ? 'ok' : 'failed' });
          // A change's own services are read again; a node's change or a full apply: every service.
          observer.health.invalidate(
            scope === undefined || (scope.nodes?.length ?? 0) > 0 ? undefined : { http: scope.http, tcp: scope.tcp },
          );
          return result;
        } catch (error) {
          stop({ result: 'failed' });
          throw error;
        }
      };
    },
  });
}
