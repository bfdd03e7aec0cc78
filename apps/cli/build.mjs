// Bundles the CLI, @postern/contract and zod into one file, twice:
//   dist/postern.mjs  ESM with a shebang: runs on any Node >= 20.19 (the node image, a checkout);
//   dist/postern.cjs  CommonJS, the script of the single executable (scripts/build-node-client.sh), since Node 22's
//                     single executable applications run CommonJS only.
// Pure JavaScript, no native modules: the same bundle serves amd64 and arm64. dockerode (Docker label discovery) brings
// ssh2, whose optional native helpers (cpu-features, sshcrypto.node) are required inside try/catch: left out, ssh2
// uses its JavaScript code (and the CLI only talks to a local socket, never over SSH).
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';

const common = {
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  external: ['cpu-features', '*.node'],
};

await Promise.all([
  build({
    ...common,
    outfile: 'dist/postern.mjs',
    format: 'esm', // Bundled CommonJS dependencies (dockerode's) call require() on Node's own modules: give the ESM file one.
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as __postern_createRequire } from 'node:module';",
        "import { fileURLToPath as __postern_fileURLToPath } from 'node:url';",
        'const require = __postern_createRequire(import.meta.url);',
        // ssh2 (under dockerode) reads __dirname at load time; ESM has none.
        'const __filename = __postern_fileURLToPath(import.meta.url);',
        "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
      ].join('\n'),
    },
  }),
  build({ ...common, outfile: 'dist/postern.cjs', format: 'cjs' }),
]);
await chmod('dist/postern.mjs', 0o755);
