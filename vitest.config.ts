import { defineConfig } from 'vitest/config';
import { serverTestFiles } from './apps/server/vitest.isolation.ts';

// Unit and API tests of every package; system/browser tests live in e2e/ with their own config.
// The server's files run in two projects on apps/server/vitest.config.ts: most share their worker's modules, those
// that replace a module get a process each (apps/server/vitest.isolation.ts says why).
const server = serverTestFiles();

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
      'apps/console',
    ],
  },
});
