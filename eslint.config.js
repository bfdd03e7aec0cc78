// One flat config for the whole workspace. Type-aware rules catch floating promises (STYLE.md §6).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['vitest.config.ts', '**/dist/**', '**/node_modules/**', '**/.turbo/**', 'data/**', 'artifacts/**', '**/*.gen.ts', '**/routeTree.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      globals: { ...globals.node, ...globals.browser },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', {
        paths: [{ name: 'child_process', importNames: ['exec', 'execSync'], message: 'Use execFile/spawn with an argv array.' },
                { name: 'node:child_process', importNames: ['exec', 'execSync'], message: 'Use execFile/spawn with an argv array.' }],
      }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in env.ts only.' }],
    },
  },
  {
    // The rules of hooks (and the React Compiler's checks the plugin recommends) for the console's components.
    files: ['apps/console/src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
  },
  {
    // The one place each program reads its environment, and tests/scripts that set it up.
    files: ['**/env.ts', '**/*.test.ts', '**/*.test.tsx', 'e2e/**', 'bench/**', 'scripts/**', '**/vitest.config.ts', '**/vite.config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { ...globals.node } },
  },
);
