import type { ServerOptions } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type onResponseAsyncHookHandler } from 'fastify';
import { PERMISSIONS } from '@postern/contract';
import type { Logger } from 'pino';
import packageJson from '../package.json' with { type: 'json' };
import type { AppDeps } from './deps.js';
import { registerSessionAuth } from './http/authenticate.js';
import { registerConsole, resolveConsoleDir } from './http/console-static.js';
import { registerErrorHandlers } from './http/error-handler.js';
import { createNodeEvents } from './http/events.js';
import { registerJsonParser } from './http/json-parser.js';
import { logClosedRequests, requestLogController } from './http/logger.js';
import { registerNodeDownloads, resolveNodeClientDir } from './http/node-downloads.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { useZodCompilers } from './http/zod-provider.js';
import { accessExchangeRoutes } from './modules/access/exchange-routes.js';
import { accessRoutes } from './modules/access/routes.js';
import { agentRoutes } from './modules/agent/routes.js';
import { registerOperationAudit } from './modules/audit/operation-audit.js';
import { auditRoutes } from './modules/audit/routes.js';
import { accountRoutes } from './modules/accounts/routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { configRoutes } from './modules/config/routes.js';
import { watchSessionStreams } from './modules/auth/session-streams.js';
import { domainRoutes } from './modules/domains/routes.js';
import { certificateRoutes } from './modules/certificates/routes.js';
import type { DomainCheck } from './modules/domains/service.js';
import { logRoutes } from './modules/logs/routes.js';
import { createGatewayPeerStatus, withStatus, type GatewayPeerStatus } from './cluster/peer-status.js';
import { nodeRoutes } from './modules/nodes/routes.js';
import { createNotifier, type Notifier, type NotifierOptions } from './modules/notifications/notifier.js';
import { notificationRoutes } from './modules/notifications/routes.js';
import { createObserver, observeApply, type Observer, type ObserverOptions } from './modules/observe/observer.js';
import { observeRoutes, registerMetricsRoute } from './modules/observe/routes.js';
import { serviceRoutes } from './modules/services/routes.js';
import { systemRoutes } from './modules/system/routes.js';
import { tokenRoutes } from './modules/tokens/routes.js';
import { appJobs, JobList } from './jobs.js';
import { closeAllSse } from './sse.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Traffic history, health checks and metrics of this app (docs/api.md "Observability"). */
    observer: Observer;
    /** Node status combined over the gateways of the database (docs/SCALE-OUT.md). */
    gatewayPeerStatus: GatewayPeerStatus;
    /** What becomes a message to the operator, and its delivery (docs/api.md "Notifications"). */
    notifier: Notifier;
  }
}

export interface BuildAppOptions {
  /** A pino logger (main.ts builds one with redaction); omitted: no logging (tests). */
  logger?: Logger;
  /** Console build to serve; undefined: resolved from config/defaults, null: serve none. */
  consoleDir?: string | null;
  /** Built node client to serve (install.sh, downloads); undefined: resolved from config/defaults, null: none. */
  nodeClientDir?: string | null;
  /** Checks that a certbot domain points at this gateway; omitted: every domain is accepted (tests, data plane off). */
  checkDomain?: DomainCheck;
  /** Traffic history, health checks and metrics (docs/api.md "Observability"). */
  observe?: ObserverOptions;
  /** Notifications (docs/api.md "Notifications"): delivery timings, the outbound address policy (tests). */
  notifications?: NotifierOptions;
}

export const VERSION: string = packageJson.version;

const silentLog = { warn: () => undefined, info: () => undefined };

/**
 * A client gets `timeoutMs` to send a whole request, headers and body (Node answers 408 and closes the socket):
 * a body that promises 100 bytes and sends 10 no longer holds a socket for minutes. Node checks on an interval,
 * so the cut comes at most one interval late. Event streams are unaffected: their GET is complete at once.
 */
function requestTimeouts(timeoutMs: number): { requestTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: timeoutMs,
    http: { headersTimeout: timeoutMs, connectionsCheckingInterval: Math.min(1000, Math.ceil(timeoutMs / 2)) },
  };
}

/** The whole HTTP app as a plugin tree over injected dependencies (main.ts only boots it). */
export async function buildApp(givenDeps: AppDeps, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; widening it keeps one FastifyInstance type for every plugin.
  const loggerInstance: FastifyBaseLogger | undefined = opts.logger;
  // What the gateway observes of itself: every apply is timed, and the health checks follow every change.
  const observer = createObserver(givenDeps, loggerInstance, opts.observe);
  // A node's status as every live gateway sees it; this gateway's own poll stays the live part of it.
  const peerStatus = createGatewayPeerStatus(
    { db: givenDeps.db, now: givenDeps.now, gatewayId: givenDeps.gateway.id, local: givenDeps.dataPlane.status },
    (err) => loggerInstance?.warn({ err }, 'gateways: could not share node status with the other gateways'),
  );
  const deps: AppDeps = {
    ...givenDeps,
    dataPlane: withStatus(observeApply(givenDeps.dataPlane, observer), peerStatus.status),
  };
  // request.ip (sign-in limits, logs) is the X-Forwarded-For client only when the peer itself is a trusted proxy;
  // proxy-addr walks the chain from the right, so a client cannot spoof it by sending the header itself.
  const trustProxy = deps.config.trustedProxies.length > 0 ? [...deps.config.trustedProxies] : false;
  const options = { trustProxy, ...requestTimeouts(deps.config.requestTimeoutMs) };
  const countSignInFailures: onResponseAsyncHookHandler = async (_request, reply) => {
    if (reply.statusCode === 401) observer.metrics.signInFailures.inc({ reason: 'wrong_credentials' });
    if (reply.statusCode === 429) observer.metrics.signInFailures.inc({ reason: 'rate_limited' });
  };
  // One request-log line per request, with its answer (http/logger.ts).
  const app: FastifyInstance =
    loggerInstance && opts.logger
      ? Fastify({ ...options, loggerInstance, logController: requestLogController(opts.logger) })
      : Fastify({ ...options, logger: false });
  if (loggerInstance) logClosedRequests(app);

  // Every API route is an operation of the contract's table (http/operation.ts): the auth gate, the typed client
  // and the OpenAPI document all read the table, so a route outside it would be invisible to them.
  app.addHook('onRoute', (route) => {
    const operation = route.config?.operation;
    if (route.url.startsWith('/api') && operation === undefined) {
      throw new Error(
        `${String(route.method)} ${route.url} is not registered from a contract operation (registerOperation)`,
      );
    }
    // The role policy cannot decide about a session route that names no permission: such a route is never served.
    if (operation?.auth === 'session' && !(PERMISSIONS as readonly string[]).includes(operation.permission))
      throw new Error(`${String(route.method)} ${route.url} is a session route without a permission (routes.ts)`);
    // Sign-in failures are counted on the sign-in route only (a hook on every route cost every answer a promise).
    if (operation?.name === 'login') {
      const own = route.onResponse;
      route.onResponse = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), countSignInFailures];
    }
  });

  registerSecurityHeaders(app);
  // Cookies are registered by the two route plugins that set them (http/cookies.ts), not here.
  registerJsonParser(app);
  useZodCompilers(app);
  registerErrorHandlers(app);
  registerSessionAuth(app, deps);
  registerOperationAudit(app, deps);
  // Event streams never end on their own; end them first, or close() would wait for them forever.
  app.addHook('preClose', async () => closeAllSse(app.server));

  app.decorate('observer', observer);
  app.decorate('gatewayPeerStatus', peerStatus);
  // Every background job of the app, listed in jobs.ts: started once Fastify is ready, stopped (reversed) at close.
  const sessionStreams = watchSessionStreams(app, deps);
  const notifier = createNotifier(deps, opts.notifications?.health ?? observer.health, loggerInstance ?? silentLog, {
    ...opts.notifications,
    timings: {
      retryFirstMs: deps.config.notificationRetryMs.first,
      retryMaxMs: deps.config.notificationRetryMs.max,
      ...opts.notifications?.timings,
    },
  });
  app.decorate('notifier', notifier);
  const jobs = new JobList(appJobs(app, deps, { observer, peerStatus, sessionStreams, notifier }), (name, err) =>
    app.log.warn({ err, job: name }, 'a background job did not stop cleanly'),
  );
  app.addHook('onReady', () => jobs.startAll());
  app.addHook('onClose', () => jobs.stopAll());
  registerMetricsRoute(app, observer, deps.config.metricsToken);

  const events = createNodeEvents();
  const nodeClientDir =
    opts.nodeClientDir === undefined ? resolveNodeClientDir(deps.config.nodeClientDir) : opts.nodeClientDir;
  await app.register(systemRoutes, { deps, version: VERSION, isNodeClientServed: nodeClientDir !== null });
  await app.register(authRoutes, { deps, sessionStreams });
  await app.register(accountRoutes, { deps, sessionStreams });
  await app.register(nodeRoutes, { deps, events });
  await app.register(tokenRoutes, { deps });
  await app.register(agentRoutes, { deps, events });
  await app.register(domainRoutes, { deps, ...(opts.checkDomain ? { checkDomain: opts.checkDomain } : {}) });
  await app.register(certificateRoutes, { deps });
  await app.register(serviceRoutes, { deps, health: observer.health });
  await app.register(configRoutes, { deps, events, ...(opts.checkDomain ? { checkDomain: opts.checkDomain } : {}) });
  await app.register(logRoutes, { deps });
  await app.register(auditRoutes, { deps });
  await app.register(observeRoutes, { deps, observer });
  await app.register(accessRoutes, { deps });
  await app.register(notificationRoutes, { deps, notifier });
  // The visitors' sign-in exchange under /_postern/access (docs/ACCESS.md): pages, not API operations.
  await app.register(accessExchangeRoutes, { deps });

  registerNodeDownloads(app, nodeClientDir);
  const consoleDir = opts.consoleDir === undefined ? resolveConsoleDir(deps.config.consoleDir) : opts.consoleDir;
  await registerConsole(app, consoleDir);
  return app;
}
