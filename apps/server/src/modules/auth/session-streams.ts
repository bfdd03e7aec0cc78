import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { listOpenSse } from '../../sse.js';
import { SESSIONS_TOPIC, sessionExpiresAtMs } from './sessions.js';

// An event stream is authenticated once, when it opens, and may then stay open for days. It must not outlive the
// session that opened it:
// - a logout, password change or two-factor enrolment ends its streams here at once (the route calls `endStreams`)
//   and, on every other gateway on the database, when they hear the 'sessions' announcement (sessions.ts makes it
//   after the rows are gone), within a NOTIFY's round trip: every open stream's session is read again;
// - a session that expires ends its streams within TICK_MS, from the expiry read when the stream was authenticated
//   (no query);
// - RECHECK_MS is the safety net for a removal nobody announced, and for a stream whose authentication read the
//   session just before an announced removal but that opened just after its recheck. An announcement lost with the
//   LISTEN connection is covered by the reconnect, which re-checks at once.
// Reading each session every tick would cost a query per session four times a second on every gateway; this costs
// one read per session with open streams per recheck or announcement.

const TICK_MS = 250;
const RECHECK_MS = 10_000;

export interface SessionStreams {
  /** Ends every open stream whose session is no longer active (reads each session again). */
  endStreams(): void;
  /** The tick, the safety net and the announcement listener (jobs.ts). */
  start(): void;
  stop(): void;
}

export function watchSessionStreams(app: FastifyInstance, deps: AppDeps): SessionStreams {
  /** Expiry (ms) of each session with an open stream, as read from the database; null: the session is gone. */
  let expiries = new Map<string, number | null>();

  /** Ends the streams of ended sessions; `reread`: every session from the database (once each), not from memory. */
  const check = async (reread: boolean): Promise<void> => {
    const known = expiries;
    const readNow = new Set<string>();
    for (const stream of listOpenSse(app.server)) {
      const { sessionId } = stream;
      if (sessionId === null) continue;
      let expiresAtMs = known.get(sessionId);
      if (reread && !readNow.has(sessionId)) {
        expiresAtMs = await sessionExpiresAtMs(deps, sessionId);
        readNow.add(sessionId);
        known.set(sessionId, expiresAtMs);
      } else if (expiresAtMs === undefined) {
        // Its authentication has just read the session: as fresh as a query now.
        expiresAtMs = stream.sessionExpiresAtMs;
        known.set(sessionId, expiresAtMs);
      }
      if (expiresAtMs === null || expiresAtMs <= deps.now().getTime()) stream.close();
    }
  };
  const report = (error: unknown): void => {
    // A failed read (the database away or closing) must not kill the process; the next tick tries again.
    app.log.error({ err: error }, 'session stream check failed');
  };
  const recheck = (): void => {
    // A fresh map: sessions without open streams are forgotten.
    expiries = new Map();
    check(true).catch(report);
  };

  let timers: NodeJS.Timeout[] = [];
  let stopListening: () => void = () => undefined;
  return {
    endStreams: recheck,
    start() {
      const tick = setInterval(() => check(false).catch(report), TICK_MS);
      const safetyNet = setInterval(recheck, RECHECK_MS);
      timers = [tick.unref(), safetyNet.unref()];
      // Another gateway ended sessions (payload), or announcements may have been missed (null): either way, re-read.
      stopListening = deps.db.onAnnounce(SESSIONS_TOPIC, recheck);
    },
    stop() {
      for (const timer of timers) clearInterval(timer);
      timers = [];
      stopListening();
    },
  };
}
