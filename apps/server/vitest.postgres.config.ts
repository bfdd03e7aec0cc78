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

// A test that builds an app of its own (e.g. with other settings) creates a database and migrates it inside the test:
// ~1 s idle, 2-3 s when the machine runs the other suites, so the 5 s default cut such tests off mid-way.
export default defineConfig({
  test: {
    name: 'server on postgres',
    include: apiTests,
    env: { POSTERN_TEST_STORE: 'postgres' },
    testTimeout: 20_000,
    setupFiles: ['src/test/setup-message-codes.ts'],
  },
});
