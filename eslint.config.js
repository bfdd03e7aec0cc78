// One flat config for the whole workspace: typescript-eslint's strict type-checked rules (floating promises, STYLE.md §6,
// unsafe `any`, needless conditions) plus the project's own (argv-only process calls, env read in env.ts only).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  {
    ignores: [
      'vitest.config.ts',
      'vitest.isolation.ts',
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      'data/**',
      'artifacts/**',
      '**/*.gen.ts',
      '**/routeTree.gen.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    // STYLE.md: 120 columns. prettier wraps code; this catches comments. Long string literals (test titles, messages
    // quoted from the spec) stay whole, and so do lint directives with their reasons.
    files: ['**/*.{ts,tsx,js,mjs}'],
    rules: {
      'max-len': [
        'error',
        {
          code: 120,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreUrls: true,
          ignoreRegExpLiterals: true,
          ignorePattern: '^\\s*// eslint-disable',
        },
      ],
    },
  },
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      globals: { ...globals.node, ...globals.browser },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // Numbers print the same everywhere; undefined, null and objects in a message are the bugs this rule is for.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowAny: false,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowRegExp: false,
        },
      ],
      // `onClick={() => setOpen(false)}` reads fine; a void value returned from a braced body is still reported.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Functions are async to satisfy an async contract (Fastify plugins, adapter interfaces, test fakes); dropping
      // `async` would turn their rejections into synchronous throws. Forgotten awaits are caught by no-floating-promises.
      '@typescript-eslint/require-await': 'off',
      // TanStack Router's documented way out of a loader or beforeLoad is `throw redirect(...)`, a Response.
      '@typescript-eslint/only-throw-error': [
        'error',
        {
          allow: [{ from: 'package', package: '@tanstack/router-core', name: 'Redirect' }],
          allowThrowingAny: false,
          allowThrowingUnknown: false,
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'child_process',
              importNames: ['exec', 'execSync'],
              message: 'Use execFile/spawn with an argv array.',
            },
            {
              name: 'node:child_process',
              importNames: ['exec', 'execSync'],
              message: 'Use execFile/spawn with an argv array.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration in env.ts only.' },
      ],
    },
  },
  {
    // Code shape (docs/ARCHITECTURE.md "Rules the code keeps"): no function of the server, the CLI or the contract is
    // longer than ~120 lines; state lives in small named objects and each function does one job. Tests are exempt: a
    // describe block holds the cases of one shared world (one gateway booted per suite), and splitting it would
    // scatter that world, not clarify it. Test helpers (src/test/, the CLI's fake system) are not exempt.
    files: ['apps/server/src/**/*.ts', 'apps/cli/src/**/*.ts', 'packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The rules of hooks (and the React Compiler's checks the plugin recommends) for the console's components.
    files: ['apps/console/src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    // The one place each program reads its environment, and tests/scripts that set it up.
    files: [
      '**/env.ts',
      '**/*.test.ts',
      '**/*.test.tsx',
      'e2e/**',
      'bench/**',
      'scripts/**',
      '**/vitest.config.ts',
      '**/vite.config.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests read bodies as `any` (light-my-request's `res.json()`, `JSON.parse`) and index arrays they just filled, then
    // assert: a wrong shape or a missing value fails the test, which is what these rules would otherwise guard against.
    files: ['**/*.test.ts', '**/*.test.tsx'],
    rules: {
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowAny: true,
          allowBoolean: false,
          allowNever: false,
          allowNullish: true,
          allowRegExp: false,
        },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { ...globals.node } },
  },
);
