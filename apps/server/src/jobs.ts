import type { FastifyInstance } from 'fastify';
import type { DbCertificateStore } from './db/certificate-store.js';
import type { DataPlane } from './dataplane/types.js';
import type { AppDeps } from './deps.js';
import { followAnnouncements } from './cluster/announcements.js';
import { startHeartbeat } from './cluster/heartbeat.js';
import type { Leases } from './cluster/leases.js';
import type { GatewayPeerStatus } from './cluster/peer-status.js';
import { startAuditRetention } from './modules/audit/retention.js';
import type { SessionStreams } from './modules/auth/session-streams.js';
import { startMetricsListener } from './modules/observe/metrics-listener.js';
import type { Notifier } from './modules/notifications/notifier.js';
import type { Observer } from './modules/observe/observer.js';
import { startExpirySweep } from './modules/services/expiry.js';
import { RENEW_TOPIC } from './modules/certificates/certificates.js';

// Every background job of the gateway, in one place: what it does, how often, and in which order jobs start (they
// stop in the reverse order). Two lists: the gateway's (main.ts: before the HTTP server listens, after it closed)
// and the app's (app.ts: when Fastify is ready, when it closes; the API tests run these too). Nothing else in the
// server starts a timer that outlives a request: per-request timers (an event stream's heartbeat, a health probe's
// timeout) end with their request, and the audit log's 250 ms burst and 10 min summary windows are buffers flushed
// by the `audit-log` job below.

export interface BackgroundJob {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** Starts jobs in order and stops them in reverse; a job that fails to stop is logged and the rest still stop. */
export class JobList {
  private started: BackgroundJob[] = [];

  constructor(
    readonly jobs: readonly BackgroundJob[],
    private readonly onStopError: (name: string, err: unknown) => void = () => undefined,
  ) {}

  async startAll(): Promise<void> {
    for (const job of this.jobs) {
      await job.start();
      this.started.push(job);
    }
  }

  async stopAll(): Promise<void> {
    const started = this.started.reverse();
    this.started = [];
    for (const job of started) {
      try {
        await job.stop();
      } catch (err) {
        this.onStopError(job.name, err);
      }
    }
  }

  names(): string[] {
    return this.jobs.map((job) => job.name);
  }
}

/** The gateway process's jobs (main.ts), started before the HTTP server listens. */
export function gatewayJobs(parts: {
  leases: Leases;
  certificateStore: DbCertificateStore;
  acmeAnswers: { stop(): void };
  dataPlane: DataPlane;
  keepServing: () => boolean;
}): BackgroundJob[] {
  return [
    // cluster/leases.ts: takes the free run-once leases and renews its own every third of POSTERN_LEASE_SECONDS;
    // gives them up at stop (another gateway takes them at its next step).
    { name: 'leases', start: () => parts.leases.start(), stop: () => parts.leases.release() },
    // db/certificate-store.ts: certificate records written behind, in order; everything queued is written at stop.
    {
      name: 'certificate-records',
      start: () => undefined,
      stop: () => parts.certificateStore.flush().catch(() => undefined),
    },
    // cluster/acme-answers.ts: hears the other gateways say which HTTP-01 answers they serve.
    { name: 'acme-answers', start: () => undefined, stop: () => parts.acmeAnswers.stop() },
    // dataplane/: the heal loop (1 s: dead nginx, instance or tunnel restarted; a failed apply retried every 5 s),
    // drift checks (3 s after a change and every POSTERN_DRIFT_CHECK_INTERVAL), the WireGuard status poll (2 s), the
    // access-log tailers, the certificate renewal timer (daily, or a failed issuance's back-off). At stop nginx and
    // WireGuard keep serving on SIGTERM (a restart), and stop too on SIGINT.
    {
      name: 'data-plane',
      start: () => parts.dataPlane.start(),
      stop: () => parts.dataPlane.stop({ keepServing: parts.keepServing() }),
    },
  ];
}

/** The app's jobs (app.ts), started when Fastify is ready and stopped when it closes. */
export function appJobs(
  app: FastifyInstance,
  deps: AppDeps,
  parts: { observer: Observer; peerStatus: GatewayPeerStatus; sessionStreams: SessionStreams; notifier: Notifier },
): BackgroundJob[] {
  const { observer, peerStatus, sessionStreams, notifier } = parts;
  let stopAnnouncements: () => void = () => undefined;
  let stopHeartbeat: () => void = () => undefined;
  let stopMetricsListener: () => Promise<void> = () => Promise.resolve();
  let stopHealthAudit: () => void = () => undefined;
  let stopRetention: () => void = () => undefined;
  let stopExpiry: () => void = () => undefined;
  let stopRenewals: () => void = () => undefined;
  return [
    // modules/certificates: "renew now" through a gateway that does not run issuance; the one that does, renews.
    {
      name: 'certificate-renewals',
      start() {
        stopRenewals = deps.db.onAnnounce(RENEW_TOPIC, (domain) => {
          if (domain !== null && domain !== '') deps.dataPlane.certificates.renew?.(domain);
        });
      },
      stop: () => stopRenewals(),
    },
    // cluster/announcements.ts: a change announced by another gateway is applied here; ACME answers acknowledged.
    {
      name: 'announcements',
      start() {
        stopAnnouncements = followAnnouncements(
          { db: deps.db, dataPlane: deps.dataPlane, gatewayId: deps.gateway.id },
          (err) => app.log.warn({ err }, 'data plane: could not apply a change announced by another gateway'),
        );
      },
      stop: () => stopAnnouncements(),
    },
    // cluster/heartbeat.ts: this gateway's `last_seen_at`, every 10 s.
    {
      name: 'heartbeat',
      start() {
        stopHeartbeat = startHeartbeat(deps, deps.gateway.id, app.log);
      },
      stop: () => stopHeartbeat(),
    },
    // cluster/peer-status.ts: what this gateway's WireGuard sees of each node, shared with the others every 10 s.
    { name: 'peer-status', start: () => peerStatus.start(), stop: () => peerStatus.stop() },
    // modules/auth/session-streams.ts: event streams end with their session (250 ms tick, 10 s re-read, announced).
    { name: 'session-streams', start: () => sessionStreams.start(), stop: () => sessionStreams.stop() },
    // modules/observe: traffic history on the minute; health checks of every backend once the data plane booted.
    { name: 'observer', start: () => observer.start(), stop: () => observer.stop() },
    // A backend's verdict changing is an audit entry, written by the `health-audit` lease's holder.
    {
      name: 'health-audit',
      start() {
        stopHealthAudit = observer.health.onHealthChange(({ health, previous }) => {
          // A first verdict that the backend is up is not an event.
          if (previous === 'unknown' && health.state !== 'down') return;
          // Every gateway checks every backend; one of them (the lease's holder) writes the audit row.
          if (!deps.leases.holds('health-audit')) return;
          deps.audit.onHealthChange({
            type: health.type,
            id: health.id,
            nodeId: health.nodeId,
            from: previous,
            to: health.state,
            detail: health.lastError,
          });
        });
      },
      stop: () => stopHealthAudit(),
    },
    // POSTERN_METRICS_ADDRESS: Prometheus' own listener, when set.
    {
      name: 'metrics-listener',
      async start() {
        const address = deps.config.metricsAddress;
        if (address) stopMetricsListener = await startMetricsListener(address, observer, deps.config.metricsToken);
      },
      stop: () => stopMetricsListener(),
    },
    // modules/audit/retention.ts: hourly pruning (the `audit-retention` lease's holder).
    {
      name: 'audit-retention',
      start() {
        const retention = startAuditRetention(deps, app.log);
        stopRetention = () => retention.stop();
      },
      stop: () => stopRetention(),
    },
    // modules/services/expiry.ts: temporary exposures disabled when due, every second (`service-expiry` lease).
    {
      name: 'service-expiry',
      start() {
        const sweep = startExpirySweep(deps, app.log);
        stopExpiry = () => sweep.stop();
      },
      stop: () => stopExpiry(),
    },
    // modules/audit/recorder.ts: buffered health entries and the refused sign-ins summed per window, written at stop.
    {
      name: 'audit-log',
      start: () => undefined,
      async stop() {
        await deps.audit.flush().catch(() => undefined);
        await deps.audit.flushSummed({ final: true }).catch((err: unknown) => {
          app.log.warn({ err }, 'audit log: the summary of refused sign-ins could not be written');
        });
      },
    },
    // modules/notifications: every second, due alerts (backends, nodes, gateways, after the grace period) are
    // written to the delivery queue and the queue is worked, both by the `notifications` lease's holder; every 5 s
    // the state is read again in full; certificates every minute; drift, set-aside changes and sign-ins as they
    // happen. Last, so it stops before the audit log is flushed (a delivery given up is audited).
    { name: 'notifications', start: () => notifier.start(), stop: () => notifier.stop() },
  ];
}
