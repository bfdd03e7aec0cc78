import { readFile } from 'node:fs/promises';
import { run } from './exec.js';

// The processes living in a namespace, whoever started them (the server's nginx and wireguard-go included):
// to check what runs after a restart, and to simulate a whole gateway host going down.

export interface NamespaceProcess {
  pid: number;
  /** argv joined with spaces, e.g. "nginx: master process nginx -p ...". */
  command: string;
}

export async function listNamespaceProcesses(ns: string): Promise<NamespaceProcess[]> {
  const pids = (await run('ip', ['netns', 'pids', ns])).split(/\s+/).filter(Boolean).map(Number);
  const found = await Promise.all(
    pids.map(async (pid) => {
      const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
      return raw === null ? null : { pid, command: raw.split('\0').filter(Boolean).join(' ') };
    }),
  );
  return found.filter((entry): entry is NamespaceProcess => entry !== null);
}

/** SIGKILLs every process in `ns`, by pid, as a power cut would end them. */
export async function killNamespaceProcesses(ns: string): Promise<void> {
  for (const { pid } of await listNamespaceProcesses(ns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
