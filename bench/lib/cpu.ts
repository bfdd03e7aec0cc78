// CPU time per program while something runs, from /proc/<pid>/stat (utime + stime of every process, grouped by
// command name). Lets a throughput figure say WHO spent the machine's time: a slow path is often another process.
import { readdir, readFile } from 'node:fs/promises';

const TICKS_PER_SECOND = 100;

async function snapshot(): Promise<Map<string, number>> {
  const byPid = new Map<string, number>();
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0) continue;
    let comm = stat.slice(stat.indexOf('(') + 1, close);
    // Several wireguard-go processes run at once (gateway, node, baseline): name each by its interface.
    if (comm === 'wireguard-go') {
      const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
      comm = `wireguard-go ${args.at(-1) ?? '?'}`;
    }
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    byPid.set(`${pid} ${comm}`, ticks);
  }
  return byPid;
}

/** Runs `fn` and returns its result with CPU seconds per command name spent meanwhile (top `limit`). */
export async function withCpu<T>(fn: () => Promise<T>, limit = 6): Promise<{ result: T; cpu: [string, number][] }> {
  const before = await snapshot();
  const result = await fn();
  const after = await snapshot();
  const byComm = new Map<string, number>();
  for (const [key, ticks] of after) {
    const delta = ticks - (before.get(key) ?? 0);
    if (delta <= 0) continue;
    const comm = key.slice(key.indexOf(' ') + 1);
    byComm.set(comm, (byComm.get(comm) ?? 0) + delta / TICKS_PER_SECOND);
  }
  const cpu = [...byComm].sort((a, b) => b[1] - a[1]).slice(0, limit);
  return { result, cpu };
}

export function formatCpu(cpu: readonly [string, number][]): string {
  return cpu.map(([comm, seconds]) => `${comm} ${seconds.toFixed(1)}s`).join(', ');
}
