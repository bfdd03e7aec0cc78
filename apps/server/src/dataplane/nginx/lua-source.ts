import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Lua module nginx runs (lua/postern.lua): beside the bundle in `dist/lua/` (build.mjs copies it), or in the
 * source tree when running from source or in tests.
 */
export function readLuaModule(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, 'lua', 'postern.lua'),
    resolve(here, 'nginx', 'lua', 'postern.lua'),
    resolve(here, 'dataplane', 'nginx', 'lua', 'postern.lua'),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`nginx's Lua module not found (looked in ${candidates.join(', ')})`);
  return readFileSync(found, 'utf8');
}
