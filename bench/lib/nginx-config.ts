import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runIn } from '../../e2e/harness/exec.js';

// The baseline of the apply benchmark: a bare `nginx -t` of the config generation the gateway serves.

/** The nginx prefix under the data directory: the directory holding the `current` generation link. */
export async function findNginxPrefix(dir: string, depth = 3): Promise<string> {
  const current = await lstat(join(dir, 'current')).catch(() => null);
  if (current?.isSymbolicLink()) return dir;
  if (depth > 0) {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const found = await findNginxPrefix(join(dir, entry.name), depth - 1).catch(() => null);
      if (found !== null) return found;
    }
  }
  throw new Error(`no nginx prefix (a directory with a "current" link) under ${dir}`);
}

/**
 * Milliseconds of one `nginx -t` of `<prefix>/current/nginx.conf`, run where nginx runs (it checks listen addresses).
 */
export async function timeNginxTest(ns: string, prefix: string): Promise<number> {
  const start = performance.now();
  await runIn(ns, 'nginx', ['-t', '-q', '-p', `${prefix}/`, '-c', join(prefix, 'current', 'nginx.conf')], {
    timeoutMs: 120_000,
  });
  return performance.now() - start;
}
