import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The API runs on the same origin in production (the server serves dist/); in dev Vite forwards /api to it.
const apiTarget = process.env.POSTERN_API_URL ?? 'http://127.0.0.1:3000';

/** Vendor groups: cached separately from app code, which changes on every release. */
const vendorChunks: [name: string, test: RegExp][] = [
  ['react', /node_modules[\\/](react|react-dom|scheduler)[\\/]/],
  ['tanstack', /node_modules[\\/]@tanstack[\\/]/],
  ['zod', /node_modules[\\/]zod[\\/]/],
];

const sideEffectFree = /([\\/]packages[\\/]contract[\\/]src[\\/]|[\\/]node_modules[\\/](\.pnpm[\\/])?zod[@\\/])/;

export default defineConfig({
  plugins: [react(), tailwindcss()],
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
          groups: vendorChunks.map(([name, test]) => ({ name, test })),
        },
      },
    },
  },
});
