import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Test files share their worker's modules (vitest `isolate: false`) wherever they can: a fresh process per file
// imported everything anew for each file — the server's Fastify, drizzle, zod and ~400 modules for ~200 files (about
// half its pass's CPU); the console's happy-dom window and English catalogues for 64 files (80 of 90 CPU-s,
// docs/TESTING.md). A file that replaces a module or a global (vi.mock and kin) needs a fresh module graph of its own,
// so it keeps vitest's default isolation; these are found by content.

const REPLACES_MODULES = /\bvi\.(mock|doMock|unmock|doUnmock|resetModules|stubGlobal|stubEnv)\(/;

/**
 * The test files under `root`/src (paths relative to `root`) that `filter` keeps, split by whether they replace
 * modules: `shared` may run in one process per worker, `isolated` each in its own.
 */
export function testFilesOf(
  root: string,
  filter: (source: string) => boolean = () => true,
): { shared: string[]; isolated: string[] } {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.test\.tsx?$/.test(file))
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
