// Bundles the CLI, @postern/contract and zod into one file, twice:
//   dist/postern.mjs  ESM with a shebang: runs on any Node >= 20.19 (the node image, a checkout);
//   dist/postern.cjs  CommonJS, the script of the single executable (scripts/build-node-client.sh), since Node 22's
//                     single executable applications run CommonJS only.
// Pure JavaScript, no native modules: the same bundle serves amd64 and arm64.
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';

const common = {
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
};

await Promise.all([
  build({ ...common, outfile: 'dist/postern.mjs', format: 'esm', banner: { js: '#!/usr/bin/env node' } }),
  build({ ...common, outfile: 'dist/postern.cjs', format: 'cjs' }),
]);
await chmod('dist/postern.mjs', 0o755);
