import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testFilesOf } from '../../vitest.isolation.js';

// The API tests once more, each app on a fresh PostgreSQL database (POSTERN_TEST_STORE=postgres): the same query code
// runs on both engines, so the same tests must pass on both. An API test is one that builds the app. As in the unit
// pass, files share their worker's modules unless they replace one (../../vitest.isolation.ts).
const api = testFilesOf(fileURLToPath(new URL('.', import.meta.url)), (source) => source.includes('buildTestApp('));

// A test that builds an app of its own (e.g. with other settings) creates a database and migrates it inside the test:
// ~1 s idle, 2-3 s when the machine runs the other suites, so the 5 s default cut such tests off mid-way.
export default defineConfig({
  test: {
    env: { POSTERN_TEST_STORE: 'postgres' },
    testTimeout: 20_000,
    setupFiles: ['src/test/setup-message-codes.ts'],
    projects: [
      { extends: true, test: { name: 'server on postgres', include: api.shared, isolate: false } },
      { extends: true, test: { name: 'server on postgres (own modules)', include: api.isolated } },
    ],
  },
});
