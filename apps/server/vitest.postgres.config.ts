import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The API tests once more, each app on a fresh PostgreSQL database (POSTERN_TEST_STORE=postgres): the same query code
// runs on both engines, so the same tests must pass on both. An API test is one that builds the app.
const root = dirname(fileURLToPath(import.meta.url));
const apiTests = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join('src', file))
  .filter((file) => readFileSync(join(root, file), 'utf8').includes('buildTestApp('));

export default defineConfig({
  test: { name: 'server on postgres', include: apiTests, env: { POSTERN_TEST_STORE: 'postgres' } },
});
