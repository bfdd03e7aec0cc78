import { execFileSync } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Holds every thread of libuv's pool (UV_THREADPOOL_SIZE, 4 by default) until the returned release is called: each
 * opens a FIFO for reading, which blocks in the thread until someone opens it for writing. Whatever needs the pool
 * meanwhile (fs/promises, fs callbacks, WebCrypto, dns.lookup) waits; what runs on the main thread does not. `dir`: a
 * private directory for the FIFO.
 */
export function holdThreadPool(dir: string): () => Promise<void> {
  const fifo = join(dir, 'pool-hold.fifo');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  // eslint-disable-next-line no-restricted-properties -- libuv's own setting, read as libuv reads it; tests only
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const readers: Promise<FileHandle>[] = Array.from({ length: size }, () => open(fifo, 'r'));
  return async () => {
    // Read-write never blocks on Linux and counts as a writer: every reader's open returns.
    const writer = openSync(fifo, 'r+');
    try {
      for (const reader of await Promise.all(readers)) await reader.close();
    } finally {
      closeSync(writer);
    }
  };
}

/** `work`'s result, or 'still waiting' once `ms` passed (a deadline for a test to fail by, never a wait). */
export function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'still waiting'>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
