import { defineConfig } from 'vitest/config';

// The multi-gateway tests build two or three apps on one PostgreSQL database inside the test: ~1 s idle, 4-6 s when
// the machine is loaded, so vitest's 5 s default cut them off mid-way (their own bounds are asserted inside).
// setup-message-codes.ts: every 422 an API test provokes carries message codes (contract message-codes.ts).
export default defineConfig({
  test: { name: 'server', testTimeout: 20_000, setupFiles: ['src/test/setup-message-codes.ts'] },
});
