import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Rolldown } from 'vite';
import { catalogPlugin } from './i18n-catalogs.ts';

// The API runs on the same origin in production (the server serves dist/); in dev Vite forwards /api to it.
const apiTarget = process.env.POSTERN_API_URL ?? 'http://127.0.0.1:3000';

const tanstack = /node_modules[\\/]@tanstack[\\/]/;

/**
 * Vendor groups: cached separately from app code, which changes on every release. TanStack is two: what the first
 * page runs (`$initial`: the entry's static imports) and the rest (useQueries, useMutation, …), which would otherwise
 * ride along on every first visit (the initial JavaScript budget, e2e/browser/initial-js.test.ts).
 */
const vendorChunks: Rolldown.CodeSplittingGroup[] = [
  { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
  { name: 'tanstack', test: tanstack, tags: ['$initial'] },
  { name: 'tanstack-more', test: tanstack },
  { name: 'zod', test: /node_modules[\\/]zod[\\/]/ },
];

const sideEffectFree = /([\\/]packages[\\/]contract[\\/]src[\\/]|[\\/]node_modules[\\/](\.pnpm[\\/])?zod[@\\/])/;

export default defineConfig({
  plugins: [react(), tailwindcss(), catalogPlugin()],
  resolve: {
    // TanStack Store asks for the shim of useSyncExternalStore, for React before 18; the same package's plain entry
    // uses React's own hook, and the first page loads no shim.
    alias: [
      {
        find: /^use-sync-external-store\/shim\/with-selector(\.js)?$/,
        replacement: 'use-sync-external-store/with-selector',
      },
    ],
  },
  server: {
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Lets scripts/initial-js-size.mjs follow each route's static imports.
    manifest: true,
    target: 'es2022',
    rolldownOptions: {
      treeshake: {
        // The contract and zod build schemas at module top level, which a bundler must assume has side effects.
        // They have none, so unused schemas (and zod itself, on routes without forms) can be dropped.
        moduleSideEffects: (id: string) => !sideEffectFree.test(id),
      },
      output: {
        codeSplitting: {
          groups: vendorChunks,
        },
      },
    },
  },
});
