import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// System, browser and deploy tests. Run from the repo root as root:
//   pnpm exec vitest run --config e2e/vitest.config.ts
// Files run one after another: each builds network namespaces, WireGuard devices and real servers, which
// are heavy on a 2-core machine and would make timings (1 s bounds) meaningless if run side by side.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['e2e/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['e2e/harness/global-setup.ts'],
    // A failed test saves the gateways' output and logs under artifacts/e2e-logs/ (harness/failure-evidence.ts).
    setupFiles: ['e2e/harness/failure-evidence.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
