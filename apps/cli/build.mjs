// Bundles the CLI, @postern/contract and zod into one ESM file with a shebang: `dist/postern.mjs` runs on any
// Node >= 20 on amd64 and arm64 (pure JavaScript, no native modules).
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';

const outfile = 'dist/postern.mjs';

await build({
  entryPoints: ['src/main.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  legalComments: 'none',
  logLevel: 'warning',
});
await chmod(outfile, 0o755);
