#!/usr/bin/env node
// Prints the gzipped JavaScript a browser loads for the first page: the entry with its static imports, plus the
// lazy chunk of the route shown first (home when signed in, login when not) with its static imports.
// Fails when either exceeds the budget (at most 128 KiB). Run after `vite build`: node
// scripts/initial-js-size.mjs
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 128 * 1024;
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));

/** The chunk files a manifest key needs before it runs: itself and its static imports, transitively. */
function staticClosure(key, seen = new Set()) {
  const chunk = manifest[key];
  if (!chunk || seen.has(chunk.file)) return seen;
  seen.add(chunk.file);
  for (const imported of chunk.imports ?? []) staticClosure(imported, seen);
  return seen;
}

const gzipSize = (file) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
const keyOf = (suffix) => Object.keys(manifest).find((key) => key.endsWith(suffix));

const entryFiles = staticClosure('index.html');
let isOverBudget = false;
for (const [name, routeModule] of [
  ['/ (home, signed in)', 'src/pages/home-page.tsx'],
  ['/login', 'src/pages/login-page.tsx'],
]) {
  const files = staticClosure(keyOf(routeModule), new Set(entryFiles));
  const bytes = [...files].filter((file) => file.endsWith('.js')).reduce((sum, file) => sum + gzipSize(file), 0);
  isOverBudget ||= bytes > BUDGET_BYTES;
  console.log(`initial JS for ${name}: ${(bytes / 1024).toFixed(1)} KiB gzipped (budget 128 KiB), ${files.size} files`);
}
const entryBytes = [...entryFiles]
  .filter((file) => file.endsWith('.js'))
  .reduce((sum, file) => sum + gzipSize(file), 0);
console.log(`entry chunks alone: ${(entryBytes / 1024).toFixed(1)} KiB gzipped`);
process.exitCode = isOverBudget ? 1 : 0;
