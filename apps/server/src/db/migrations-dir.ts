import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The committed SQL migrations: `apps/server/drizzle` when running from source, `dist/drizzle` beside the
 * bundle (build.mjs copies them there).
 */
export function resolveMigrationsDir(): string {
  return resolveFolder('drizzle');
}

/** The committed PostgreSQL migrations: `apps/server/drizzle-pg`, or `dist/drizzle-pg` beside the bundle. */
export function resolvePgMigrationsDir(): string {
  return resolveFolder('drizzle-pg');
}

function resolveFolder(name: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, name), resolve(here, '..', name), resolve(here, '../..', name)];
  const found = candidates.find((dir) => existsSync(join(dir, 'meta', '_journal.json')));
  if (!found) throw new Error(`database migrations not found (looked in ${candidates.join(', ')})`);
  return found;
}
