import { defineConfig } from 'vitest/config';

// The multi-gateway tests build two or three apps on one PostgreSQL database inside the test: ~1 s idle, 4-6 s when
// the machine is loaded, so vitest's 5 s default cut them off mid-way (their own bounds are asserted inside).
export default defineConfig({ test: { name: 'server', testTimeout: 20_000 } });
