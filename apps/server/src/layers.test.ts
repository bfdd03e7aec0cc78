import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// The server's layers, checked on the import lines of every source file (tests excluded: they may build a whole
// app to test one layer). Direction: routes → services → db; the data plane never reads the DB or the env; the DB
// layer never reaches into the data plane; model/ and lib/ are the bottom and import no layer.

const SRC = dirname(fileURLToPath(import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Every module a file imports or re-exports: package names as written, relative ones as paths under src/. */
function importsOf(file: string, text: string): string[] {
  const statement = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'/;
  const sideEffect = /(?:^|\n)\s*import\s+'([^']+)'/;
  const dynamic = /import\(\s*'([^']+)'\s*\)/;
  const any = new RegExp([statement, sideEffect, dynamic].map((re) => re.source).join('|'), 'g');
  const specifiers = [...text.matchAll(any)].map((match) => match[1] ?? match[2] ?? match[3] ?? '');
  const from = posix.dirname(file);
  const resolve = (spec: string): string => posix.normalize(posix.join(from, spec)).replace(/\.js$/, '.ts');
  return specifiers.map((spec) => (spec.startsWith('.') ? resolve(spec) : spec));
}

const graph = new Map(
  sourceFiles(SRC).map((path) => {
    const file = relative(SRC, path).split('\\').join('/');
    return [file, importsOf(file, readFileSync(path, 'utf8'))] as const;
  }),
);

/** `file → import` pairs where a file matching `from` imports something matching `forbidden`. */
function crossings(from: RegExp, forbidden: RegExp): string[] {
  return [...graph].flatMap(([file, imports]) =>
    from.test(file) ? imports.filter((target) => forbidden.test(target)).map((target) => `${file} → ${target}`) : [],
  );
}

const APP_LAYERS = new RegExp(
  '^(db|dataplane|modules|http|test)/|^(app|deps|env|main|bootstrap|create-data-plane|dataplane-apply|sse|errors)\\.ts$',
);

describe('layers', () => {
  test('the import reader finds static, re-exported and dynamic imports', () => {
    const text = [
      "import { a } from './a.js';",
      "export { b } from '../lib/b.js';",
      "import type {\n  C,\n} from 'pkg';",
      "const d = await import('./d.js');",
      "import './e.js';",
    ].join('\n');
    expect(importsOf('db/x.ts', text)).toEqual(['db/a.ts', 'lib/b.ts', 'pkg', 'db/d.ts', 'db/e.ts']);
  });

  test('reads the whole tree', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('db/desired-state.ts')).toContain('db/schema.ts');
  });

  test('model/ is plain data: it imports nothing', () => {
    expect(crossings(/^model\//, /./)).toEqual([]);
  });

  test('lib/ imports no layer of the app', () => {
    expect(crossings(/^lib\//, APP_LAYERS)).toEqual([]);
  });

  test('the DB layer never imports the data plane, the modules or the HTTP layer', () => {
    expect(crossings(/^db\//, /^(dataplane|modules|http)\/|^(app|deps)\.ts$/)).toEqual([]);
  });

  test('the data plane reads neither the DB nor the environment, and knows nothing of the API', () => {
    const forbidden = /^(db|modules|http)\/|^(app|deps|env|main|bootstrap)\.ts$|^drizzle-orm/;
    expect(crossings(/^dataplane\//, forbidden)).toEqual([]);
  });

  test('routes call services only: no route queries the database', () => {
    expect(crossings(/^modules\/[^/]+\/routes\.ts$/, /^db\/|^drizzle-orm/)).toEqual([]);
  });
});
