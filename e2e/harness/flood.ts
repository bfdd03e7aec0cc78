import { fileURLToPath } from 'node:url';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// One address flooding a public port with half-open TLS handshakes, and a bystander measuring an untouched service
// meanwhile (programs/flood.mjs). Used by the listener test in e2e/system and by bench/listener.ts.

const FLOOD = fileURLToPath(new URL('./programs/flood.mjs', import.meta.url));

export interface FloodStats {
  /** Connection attempts so far (reopens included). */
  started: number;
  /** Connected now. */
  held: number;
  /** Connected, then closed by the gateway. */
  closed: number;
  /** Never connected (refused, reset, timed out). */
  failed: number;
  /** Connect not answered yet (SYNs the gateway dropped are retried by the attacker's kernel). */
  pending: number;
}

export interface HandshakeFlood {
  process: ManagedProcess;
  stats(): FloodStats;
  /** The highest `held` printed so far. */
  maxHeld(): number;
  stop(): Promise<void>;
}

function parseStats(line: string): FloodStats {
  const value = (name: string): number => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? 0);
  return {
    started: value('started'),
    held: value('held'),
    closed: value('closed'),
    failed: value('failed'),
    pending: value('pending'),
  };
}

/**
 * `count` connections from `sourceIp` to `ip:port`, each stalled after the first bytes of a TLS handshake, kept up
 * until stop(). Resolves once every connection was attempted at least once.
 */
export async function startHandshakeFlood(
  lab: Lab,
  ns: string,
  target: { ip: string; port: number },
  count: number,
  /** undefined: the namespace's own address (cheapest for the attacker's kernel: no port search per socket). */
  sourceIp: string | undefined,
  reopenMs = 0,
): Promise<HandshakeFlood> {
  // Its own open-file limit: ten thousand sockets are more than a shell's default 1,024. At the lowest priority: a
  // real attacker spends its own machine's CPU, not the gateway's, and here both share this one with the bystander.
  const child = lab.spawn(ns, `flood of ${target.ip}:${target.port}`, 'nice', [
    '-n',
    '19',
    'prlimit',
    `--nofile=${count + 1024}`,
    process.execPath,
    FLOOD,
    'handshakes',
    target.ip,
    String(target.port),
    String(count),
    sourceIp ?? '-',
    String(reopenMs),
  ]);
  const lines = (): string[] => child.text.split('\n').filter((line) => line.startsWith('flood '));
  const stats = (): FloodStats => parseStats(lines().at(-1) ?? '');
  await waitFor(() => stats().started >= count, {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: `the flood to attempt ${count} connections`,
  }).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${child.text.slice(-2000)}`);
  });
  return {
    process: child,
    stats,
    maxHeld: () => Math.max(0, ...lines().map((line) => parseStats(line).held)),
    stop: () => child.stop(2000),
  };
}

export interface RequestWindow {
  ok: number;
  fail: number;
  p50: number;
  p99: number;
  max: number;
  /** Failures by kind ("ECONNRESET", "timeout", "status 502"): count. */
  errors: Record<string, number>;
  /** Milliseconds of each successful request, ascending. */
  latencies: number[];
}

function nearestRank(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
}

/** Several windows taken as one (e.g. the baselines between two floods, and the floods). */
export function poolWindows(windows: readonly RequestWindow[]): RequestWindow {
  const latencies = windows.flatMap((w) => w.latencies).sort((a, b) => a - b);
  const errors: Record<string, number> = {};
  for (const w of windows) for (const [kind, n] of Object.entries(w.errors)) errors[kind] = (errors[kind] ?? 0) + n;
  return {
    ok: latencies.length,
    fail: windows.reduce((sum, w) => sum + w.fail, 0),
    p50: nearestRank(latencies, 50),
    p99: nearestRank(latencies, 99),
    max: latencies.at(-1) ?? 0,
    errors,
    latencies,
  };
}

export interface RequestLoad {
  /** Ends the current window and returns its figures once its requests have finished (and starts the next). */
  report(): Promise<RequestWindow>;
  stop(): Promise<void>;
}

/** One fresh HTTPS request (new connection) to `host` at `ip:port` every `intervalMs`, from `sourceIp`. */
export async function startRequests(
  lab: Lab,
  ns: string,
  target: { ip: string; port: number; host: string; path: string },
  intervalMs: number,
  sourceIp: string,
): Promise<RequestLoad> {
  const child = lab.spawn(
    ns,
    `requests to ${target.host}`,
    process.execPath,
    [FLOOD, 'requests', target.ip, String(target.port), target.host, target.path, String(intervalMs), sourceIp],
    { withStdin: true },
  );
  await child.waitForOutput(/^requesting$/m, 5000);
  let reports = 0;
  return {
    async report() {
      const wanted = ++reports;
      const before = child.text.length;
      child.write('report\n');
      const line = await waitFor(
        () =>
          child.text
            .split('\n')
            .filter((l) => l.startsWith('report '))
            .at(wanted - 1),
        { timeoutMs: 15_000, intervalMs: 50, what: 'the request load to report' },
      );
      const value = (name: string): number => Number(new RegExp(`${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
      const errors: Record<string, number> = {};
      const output = child.text.slice(before);
      for (const match of output.matchAll(/^error (\d+) (.+)$/gm))
        errors[match[2] ?? ''] = (errors[match[2] ?? ''] ?? 0) + Number(match[1]);
      const latencies = (/^latencies (.*)$/m.exec(output)?.[1] ?? '')
        .split(',')
        .filter((v) => v !== '')
        .map(Number);
      return {
        ok: value('ok'),
        fail: value('fail'),
        p50: value('p50'),
        p99: value('p99'),
        max: value('max'),
        errors,
        latencies,
      };
    },
    stop: () => child.stop(1000),
  };
}
