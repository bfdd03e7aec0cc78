import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A Lua module nginx runs (lua/<file>): beside the bundle in `dist/lua/` (build.mjs copies the folder), or in the
 * source tree when running from source or in tests.
 */
function readLuaFile(file: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, 'lua', file),
    resolve(here, 'nginx', 'lua', file),
    resolve(here, 'dataplane', 'nginx', 'lua', file),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`nginx's Lua module ${file} not found (looked in ${candidates.join(', ')})`);
  return readFileSync(found, 'utf8');
}

/** lua/postern.lua: routing, certificates, ACME answers, the control socket. */
export const readLuaModule = (): string => readLuaFile('postern.lua');

/** lua/postern_access.lua: who may reach a service (docs/ACCESS.md). */
export const readAccessLuaModule = (): string => readLuaFile('postern_access.lua');
