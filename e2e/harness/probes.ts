import { fileURLToPath } from 'node:url';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// Clients that keep watching while the gateway changes, restarts or heals (programs/prober.mjs): periodic probes
// of untouched services, and long-lived connections whose traffic must keep flowing.

const PROBER = fileURLToPath(new URL('./programs/prober.mjs', import.meta.url));

export interface Probes {
  /** Probes that failed so far, one line each ("fail SPEC TIME ERROR"). */
  failures(): string[];
  /** Total probes answered and failed so far. */
  report(): Promise<{ ok: number; fail: number }>;
  stop(): Promise<void>;
}

/** HTTPS `http:IP:PORT:HOST:PATH` and TCP echo `tcp:IP:PORT` probes, each every `intervalMs`. */
export async function startProbes(lab: Lab, ns: string, intervalMs: number, specs: string[]): Promise<Probes> {
  const child = lab.spawn(ns, 'probes', process.execPath, [PROBER, 'probe', String(intervalMs), ...specs], {
    withStdin: true,
  });
  await child.waitForOutput(/^probing$/m, 5000);
  let reports = 0;
  return {
    failures: () => child.text.split('\n').filter((line) => line.startsWith('fail ')),
    async report() {
      reports++;
      child.write('report\n');
      const wanted = reports;
      const line = await waitFor(
        () =>
          child.text
            .split('\n')
            .filter((l) => l.startsWith('report '))
            .at(wanted - 1),
        {
          timeoutMs: 5000,
          intervalMs: 20,
          what: 'the probes to report',
        },
      );
      const [, ok = '0', fail = '0'] = /ok=(\d+) fail=(\d+)/.exec(line) ?? [];
      return { ok: Number(ok), fail: Number(fail) };
    },
    stop: () => child.stop(1000),
  };
}

export interface HeldConnection {
  process: ManagedProcess;
  /** Chunks (HTTP) or echo replies (TCP) received so far. */
  count(): number;
  isClosed(): boolean;
  /** Resolves once traffic has kept arriving for `ms` (and the connection never closed meanwhile). */
  keepsFlowingFor(ms: number): Promise<void>;
}

function held(child: ManagedProcess, counter: 'chunks' | 'replies'): HeldConnection {
  const count = (): number =>
    Number(
      child.text
        .split('\n')
        .filter((l) => l.startsWith(`${counter} `))
        .at(-1)
        ?.split(' ')[1] ?? 0,
    );
  const isClosed = (): boolean => /^closed$/m.test(child.text);
  return {
    process: child,
    count,
    isClosed,
    async keepsFlowingFor(ms) {
      const until = Date.now() + ms;
      let last = count();
      let lastGrowth = Date.now();
      await waitFor(
        () => {
          if (isClosed()) throw new Error(`the held connection was closed:\n${child.text.slice(-500)}`);
          const now = count();
          if (now > last) {
            last = now;
            lastGrowth = Date.now();
          }
          // Traffic arrives every 100-200 ms; two seconds without any is a stall.
          if (Date.now() - lastGrowth > 2000)
            throw new Error(`no traffic for ${Date.now() - lastGrowth} ms on a held connection`);
          return Date.now() >= until;
        },
        { timeoutMs: ms + 5000, intervalMs: 250, what: `traffic to keep flowing for ${ms} ms` },
      );
    },
  };
}

/** An HTTPS response that never ends (the echo backend's /trickle), held open from `ns`. */
export async function holdHttp(
  lab: Lab,
  ns: string,
  ip: string,
  port: number,
  host: string,
  path = '/trickle',
): Promise<HeldConnection> {
  const child = lab.spawn(ns, `held https ${host}${path}`, process.execPath, [
    PROBER,
    'hold-http',
    ip,
    String(port),
    host,
    path,
  ]);
  await child.waitForOutput(/^open$/m, 5000);
  return held(child, 'chunks');
}

/** A TCP session to an echo service, a line every 200 ms, held open from `ns`. */
export async function holdTcp(lab: Lab, ns: string, ip: string, port: number): Promise<HeldConnection> {
  const child = lab.spawn(ns, `held tcp ${ip}:${port}`, process.execPath, [PROBER, 'hold-tcp', ip, String(port)]);
  await child.waitForOutput(/^open$/m, 5000);
  return held(child, 'replies');
}
