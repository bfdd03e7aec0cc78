import { defineConfig } from 'vitest/config';
import { testFilesOf } from './vitest.isolation.ts';

// Unit and API tests of every package; system/browser tests live in e2e/ with their own config.
// The server's and the console's files run in two projects each: most share their worker's modules, those that
// replace a module get a process each (vitest.isolation.ts says why).
const server = testFilesOf('apps/server');
const console = testFilesOf('apps/console');

export default defineConfig({
  test: {
    projects: [
      'packages/contract',
      {
        extends: './apps/server/vitest.config.ts',
        root: './apps/server',
        test: { name: 'server', include: server.shared, isolate: false },
      },
      {
        extends: './apps/server/vitest.config.ts',
        root: './apps/server',
        test: { name: 'server (own modules)', include: server.isolated },
      },
      'apps/cli',
      {
        extends: './apps/console/vitest.config.ts',
        root: './apps/console',
        test: { name: 'console', include: console.shared, isolate: false },
      },
      {
        extends: './apps/console/vitest.config.ts',
        root: './apps/console',
        test: { name: 'console (own modules)', include: console.isolated },
      },
    ],
  },
});
