import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The committed SQL migrations: `apps/server/drizzle` when running from source, `dist/drizzle` beside the
 * bundle (build.mjs copies them there).
 */
export function resolveMigrationsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'drizzle'), resolve(here, '../drizzle'), resolve(here, '../../drizzle')];
  const found = candidates.find((dir) => existsSync(join(dir, 'meta', '_journal.json')));
  if (!found) throw new Error(`database migrations not found (looked in ${candidates.join(', ')})`);
  return found;
}
