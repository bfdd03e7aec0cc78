import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';

// Removing what a run created, synchronously so it also works from `exit` and signal handlers: every process
// inside the run's namespaces is killed by pid (`ip netns pids`), then the namespaces are deleted (which takes
// their veths and TUN devices along), then stale WireGuard control sockets are removed.

const WG_SOCKET_DIR = '/var/run/wireguard';

function listNamespaces(): string[] {
  try {
    return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter((name) => name !== '');
  } catch {
    return [];
  }
}

function killAllInSync(ns: string): void {
  let pids: number[] = [];
  try {
    pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Interfaces of the test process's own namespace (the management veth ends) whose names start with `prefix`. */
export function linksWithPrefix(prefix: string): string[] {
  try {
    return execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '')
      .filter((name) => name.startsWith(prefix));
  } catch {
    return [];
  }
}

/**
 * Kills every process in, and deletes, each namespace whose name starts with `prefix`, and deletes this
 * namespace's interfaces with that prefix at once (the kernel would only reap them later with the namespace).
 */
export function sweepNamespaces(prefix: string): void {
  for (const link of linksWithPrefix(prefix)) {
    try {
      execFileSync('ip', ['link', 'delete', link], { stdio: 'ignore' });
    } catch {
      // Gone with its namespace already.
    }
  }
  const mine = listNamespaces().filter((name) => name.startsWith(prefix));
  for (const ns of mine) killAllInSync(ns);
  for (const ns of mine) {
    try {
      execFileSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' });
    } catch {
      // Deleted concurrently; nothing left to do.
    }
  }
  try {
    for (const file of readdirSync(WG_SOCKET_DIR)) {
      if (file.startsWith(prefix) && file.endsWith('.sock')) rmSync(`${WG_SOCKET_DIR}/${file}`, { force: true });
    }
  } catch {
    // No WireGuard socket directory: nothing to remove.
  }
}

export function namespacesWithPrefix(prefix: string): string[] {
  return listNamespaces().filter((name) => name.startsWith(prefix));
}

const pending = new Map<number, () => void>();
let nextKey = 0;
let installed = false;

function runPending(): void {
  for (const action of [...pending.values()].reverse()) {
    try {
      action();
    } catch {
      // Best effort: one failed cleanup must not stop the others.
    }
  }
  pending.clear();
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.once('exit', runPending);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      runPending();
      // Re-raise so the process still ends the way the signal meant.
      process.kill(process.pid, signal);
    });
  }
}

/** Registers a synchronous cleanup that runs on exit or a fatal signal; the returned function unregisters it. */
export function registerExitCleanup(action: () => void): () => void {
  installHandlers();
  const key = nextKey++;
  pending.set(key, action);
  return () => {
    pending.delete(key);
  };
}
