import { mkdir, readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { OVERLAY_ROOT, overlayDir } from './options.js';

/** The overlay dirs on disk: one per epoch, each holding what `planOverlay` computed for that generation. */
export interface OverlayStore {
  /** Make the overlay dir of `epoch` hold exactly `files` (unchanged files are not rewritten). */
  sync(epoch: number, files: ReadonlyMap<string, string>): Promise<void>;
  /** Remove the dirs of every epoch not in `keep`. */
  prune(keep: readonly number[]): Promise<void>;
  /** Empty the root: overlays are derived from the DB, and a new process starts with its own epochs. */
  reset(): Promise<void>;
}

// Marker names: a static domain id, or `host.<name>` for a domain the generation does not know.
const FILE_NAME_RE = /^(?:\d{6}|host\.[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)$/;

export function createOverlayStore(prefixDir: string): OverlayStore {
  const root = join(prefixDir, OVERLAY_ROOT);
  /** What each epoch's dir holds, so a sync writes only what changed. */
  const written = new Map<number, Map<string, string>>();

  return {
    async sync(epoch, files) {
      const dir = overlayDir(prefixDir, epoch);
      let current = written.get(epoch);
      if (current === undefined) {
        await mkdir(dir, { recursive: true, mode: 0o755 });
        current = new Map();
        written.set(epoch, current);
      }
      // Every name first: a refused sync changes nothing.
      for (const name of files.keys()) if (!FILE_NAME_RE.test(name)) throw new Error(`invalid overlay file name ${JSON.stringify(name)}`);
      for (const [name, content] of files) {
        if (current.get(name) === content) continue;
        // Atomic: a half-written file must never exist (a marker is also read by people debugging).
        await writeFileAtomic(join(dir, name), content, 0o644);
        current.set(name, content);
      }
      for (const name of [...current.keys()]) {
        if (files.has(name)) continue;
        await unlink(join(dir, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
        current.delete(name);
      }
    },

    async prune(keep) {
      const names = await readdir(root).catch(() => []);
      for (const name of names) {
        const epoch = Number(name);
        if (keep.includes(epoch)) continue;
        await rm(join(root, name), { recursive: true, force: true });
        written.delete(epoch);
      }
    },

    async reset() {
      await rm(root, { recursive: true, force: true });
      await mkdir(root, { recursive: true, mode: 0o755 });
      written.clear();
    },
  };
}
