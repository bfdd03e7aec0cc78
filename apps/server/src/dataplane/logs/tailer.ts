import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { createSingleFlight } from '../../lib/serial.js';

// Follows one append-only log file: fs.watch for low latency, a poll as the safety net (watch misses events on
// some filesystems and after renames). Handles rotation (the path now names another inode: finish nothing,
// start the new file from 0) and truncation (size below our offset: restart from 0).

export interface TailerOptions {
  pollMs?: number;
  /** Bytes of existing content to read at start, so recent lines are available at once. */
  backlogBytes?: number;
}

export interface Tailer {
  /** Check the file now (also done on watch events and every poll). */
  check(): Promise<void>;
  close(): void;
}

export function createTailer(path: string, onLines: (lines: string[]) => void, options: TailerOptions = {}): Tailer {
  const { pollMs = 1000, backlogBytes = 64 * 1024 } = options;
  let handle: FileHandle | null = null;
  let inode = -1;
  let offset = 0;
  let partial = '';
  let isFirstOpen = true;
  let isClosed = false;
  let watcher: FSWatcher | null = null;

  async function reopen(): Promise<void> {
    await handle?.close().catch(() => undefined);
    handle = null;
    const next = await open(path, 'r').catch(() => null);
    if (!next) return;
    const info = await next.stat();
    handle = next;
    inode = info.ino;
    offset = isFirstOpen ? Math.max(0, info.size - backlogBytes) : 0;
    partial = '';
    if (isFirstOpen && offset > 0) partial = '\u0000'; // drop the first, probably cut, line of the backlog
    isFirstOpen = false;
    if (!watcher) {
      try {
        watcher = watch(path, () => {
          void check();
        });
        watcher.on('error', () => {
          watcher?.close();
          watcher = null;
        });
      } catch {
        watcher = null; // the poll still covers us
      }
    }
  }

  async function readNew(): Promise<void> {
    if (!handle) return;
    const { size } = await handle.stat();
    if (size < offset) {
      offset = 0;
      partial = '';
    }
    while (offset < size) {
      const buffer = Buffer.alloc(Math.min(size - offset, 256 * 1024));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
      const parts = (partial + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      const lines = parts.filter((line) => line !== '' && !line.startsWith('\u0000'));
      if (lines.length > 0) onLines(lines);
    }
  }

  async function checkOnce(): Promise<void> {
    const info = await stat(path).catch(() => null);
    if (handle && info && info.ino !== inode) {
      await readNew(); // the rest of the rotated file first
      await reopen();
    } else if (!handle && info) {
      await reopen();
    }
    await readNew();
  }

  const checkInFlight = createSingleFlight(() => checkOnce().catch(() => undefined));
  function check(): Promise<void> {
    return isClosed ? Promise.resolve() : checkInFlight();
  }

  const timer = setInterval(() => {
    void check();
  }, pollMs);
  timer.unref();
  void check();

  return {
    check,
    close() {
      isClosed = true;
      clearInterval(timer);
      watcher?.close();
      void handle?.close().catch(() => undefined);
      handle = null;
    },
  };
}
