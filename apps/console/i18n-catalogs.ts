import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import type { Plugin } from 'vite';
import { partOf } from './src/i18n/parts.ts';

/**
 * The console's catalogues (src/i18n/catalogs/<code>.json: message id → ICU message) compiled at build, so the
 * browser gets Lingui's compiled form and never loads a message parser. `virtual:postern-catalog/de` holds the first
 * page's texts and loaders of the other parts (src/i18n/parts.ts), each a chunk: `virtual:postern-catalog/de/home`, …
 */
const PREFIX = 'virtual:postern-catalog/';
const RESOLVED = `\0${PREFIX}`;
const catalogDir = join(import.meta.dirname, 'src', 'i18n', 'catalogs');
const CODE = /^[a-z]{2,3}(-[A-Z][A-Za-z]{1,3})?$/;

export function compileCatalog(source: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(source).map(([id, message]) => [id, compileMessage(message)]));
}

export function catalogPlugin(): Plugin {
  return {
    name: 'postern-catalogs',
    resolveId(id) {
      return id.startsWith(PREFIX) ? `\0${id}` : null;
    },
    load(id) {
      if (!id.startsWith(RESOLVED)) return null;
      const [code = '', part = 'first'] = id.slice(RESOLVED.length).split('/');
      if (!CODE.test(code) || !['first', 'signin', 'home', 'more'].includes(part))
        throw new Error(`not a catalogue: ${id}`);
      const file = join(catalogDir, `${code}.json`);
      this.addWatchFile(file);
      const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      const texts = (of: string) =>
        // JSON.parse of a string literal parses faster than the same object as a JS literal.
        `JSON.parse(${JSON.stringify(JSON.stringify(compileCatalog(Object.fromEntries(Object.entries(all).filter(([key]) => partOf(key) === of)))))})`;
      if (part !== 'first') return `export default ${texts(part)};`;
      return [
        `export const first = ${texts('first')};`,
        `export const signin = () => import('${PREFIX}${code}/signin');`,
        `export const home = () => import('${PREFIX}${code}/home');`,
        `export const more = () => import('${PREFIX}${code}/more');`,
      ].join('\n');
    },
  };
}
