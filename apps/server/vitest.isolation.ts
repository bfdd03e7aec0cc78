import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The unit and API test files of the server share their worker's modules (vitest `isolate: false`): a fresh process
// per file imported Fastify, drizzle, zod and the app's ~400 modules again for each of ~200 files, about half the
// pass's CPU. A file that replaces a module (vi.mock and kin) needs a fresh module graph of its own, so it keeps
// vitest's default isolation; these are found by content, like the PostgreSQL pass finds its API tests.

const root = dirname(fileURLToPath(import.meta.url));
const REPLACES_MODULES = /\bvi\.(mock|doMock|unmock|doUnmock|resetModules|stubGlobal|stubEnv)\(/;

/** The server's test files (relative to apps/server) that `filter` keeps, split by whether they replace modules. */
export function serverTestFiles(filter: (source: string) => boolean = () => true): {
  shared: string[];
  isolated: string[];
} {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join('src', file))
    .sort();
  const shared: string[] = [];
  const isolated: string[] = [];
  for (const file of files) {
    const source = readFileSync(join(root, file), 'utf8');
    if (!filter(source)) continue;
    (REPLACES_MODULES.test(source) ? isolated : shared).push(file);
  }
  return { shared, isolated };
}
