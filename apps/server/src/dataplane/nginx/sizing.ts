import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

// How many connections the HTTP instance's workers may hold, sized to the machine (POSTERN_WORKER_CONNECTIONS
// overrides it). A worker refuses connections beyond `worker_connections` ("worker_connections are not enough"), so a
// fixed 4,096 left a large machine as easy to fill as a small one; beyond what memory carries, though, more slots
// only move the failure into the kernel. Figures behind the constants: the dataplane README, "The public listeners".

/**
 * Memory one connection may cost, counted high: a proxied request holds two (client and backend), a TLS client's
 * buffers and the kernel's socket buffers while data flows. Idle or half-open connections cost far less (measured:
 * the dataplane README).
 */
export const BYTES_PER_CONNECTION = 64 * 1024;
/** The share of the machine's memory the workers' connections may take together. */
export const MEMORY_SHARE = 0.25;
/** nginx's own default times four would be 2,048: never fewer than the 4,096 Postern always had. */
export const MIN_WORKER_CONNECTIONS = 4096;
/** The connection array is allocated up front (~0.5 KiB per slot and worker): a cap keeps that small. */
export const MAX_WORKER_CONNECTIONS = 65_536;

/** The memory this process may use: the machine's, or its cgroup's limit when lower (a container). */
export function machineMemory(): number {
  const constrained = process.constrainedMemory();
  const total = totalmem();
  return constrained > 0 && constrained < total ? constrained : total;
}

/** Files a worker keeps open besides its connections (logs, listeners, the Lua module, certificates being read). */
export const SPARE_FILES = 1024;

/**
 * The hard limit on open files this process passes on to nginx (`/proc/self/limits`). Workers may raise their soft
 * limit up to it, never beyond without CAP_SYS_RESOURCE (containers lack it: nginx's setrlimit then fails). null:
 * unknown or unlimited.
 */
export function openFilesHardLimit(limits = readProcLimits()): number | null {
  const match = /^Max open files\s+\S+\s+(\d+)/m.exec(limits);
  return match?.[1] === undefined ? null : Number(match[1]);
}

function readProcLimits(): string {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return '';
  }
}

/**
 * Connections per worker for `workers` workers (`worker_processes auto`: one per CPU) on `memoryBytes`, within the
 * open files a worker may have (a connection is a file; one at its file limit stops accepting, whatever its slots).
 */
export function workerConnectionsFor(memoryBytes: number, workers: number, fileLimit: number | null): number {
  const byMemory = Math.floor((memoryBytes * MEMORY_SHARE) / BYTES_PER_CONNECTION / Math.max(1, workers));
  const byFiles = fileLimit === null ? Infinity : fileLimit - SPARE_FILES;
  // A multiple of 1,024, so the rendered figure reads as chosen.
  const rounded = Math.floor(Math.min(byMemory, byFiles) / 1024) * 1024;
  return Math.min(MAX_WORKER_CONNECTIONS, Math.max(MIN_WORKER_CONNECTIONS, rounded));
}

/** The machine's own figure: `worker_processes auto` starts one worker per CPU. */
export function machineWorkerConnections(): number {
  return workerConnectionsFor(machineMemory(), availableParallelism(), openFilesHardLimit());
}

/**
 * Open files per worker (`worker_rlimit_nofile`): one per connection plus spares, twice over where the hard limit
 * allows, and never above it (nginx could not set it: its workers would keep the soft limit, often 1,024).
 */
export function openFilesFor(workerConnections: number, fileLimit: number | null): number {
  const wanted = workerConnections * 2 + SPARE_FILES;
  return fileLimit === null ? wanted : Math.min(wanted, fileLimit);
}
