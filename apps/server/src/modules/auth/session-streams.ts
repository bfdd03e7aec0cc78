import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { listOpenSse } from '../../sse.js';
import { isSessionActive } from './sessions.js';

// An event stream is authenticated once, when it opens, and may then stay open for days. It must not outlive the
// session that opened it: logout and password change end their streams at once (they call `endStreams`), and a
// sweep every SWEEP_MS ends the streams of sessions that expired or were removed any other way.

const SWEEP_MS = 250;

export interface SessionStreams {
  /** Ends every open stream whose session is no longer active. */
  endStreams(): void;
}

export function watchSessionStreams(app: FastifyInstance, deps: AppDeps): SessionStreams {
  const endStreams = async (): Promise<void> => {
    const verdicts = new Map<string, boolean>();
    for (const stream of listOpenSse(app.server)) {
      if (stream.sessionId === null) continue;
      let isActive = verdicts.get(stream.sessionId);
      if (isActive === undefined)
        verdicts.set(stream.sessionId, (isActive = await isSessionActive(deps, stream.sessionId)));
      if (!isActive) stream.close();
    }
  };
  const sweep = setInterval(async () => {
    try {
      await endStreams();
    } catch (error) {
      // A failed read (database closing) must not kill the process; the next sweep tries again.
      app.log.error({ err: error }, 'session stream sweep failed');
    }
  }, SWEEP_MS);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
  return { endStreams };
}
