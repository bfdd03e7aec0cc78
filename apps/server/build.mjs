// Bundles the control plane into dist/main.js and the start command's supervisor into dist/supervisor.js (ESM) and
// copies the SQL migrations (SQLite's and PostgreSQL's) and nginx's Lua module beside it. Native and dynamically
// loaded packages stay external and are resolved from node_modules at run time.
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts', 'src/supervisor.ts'],
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // pg-native: pg's optional native binding, loaded only when asked for (we do not).
  external: ['better-sqlite3', '@node-rs/argon2', 'acme-client', 'pg-native'],
  // CommonJS dependencies inside an ESM bundle call require(); give them one.
  banner: {
    js: "import { createRequire as __postern_createRequire } from 'node:module'; const require = __postern_createRequire(import.meta.url);",
  },
  logLevel: 'info',
});
cpSync('drizzle', 'dist/drizzle', { recursive: true });
cpSync('drizzle-pg', 'dist/drizzle-pg', { recursive: true });
cpSync('src/dataplane/nginx/lua', 'dist/lua', { recursive: true });
