import { defineConfig } from 'vitest/config';

// Unit and API tests of every package; system/browser tests live in e2e/ with their own config.
export default defineConfig({
  test: {
    projects: ['packages/contract', 'apps/server', 'apps/cli', 'apps/console'],
  },
});
