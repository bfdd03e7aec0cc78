import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import type { Plugin } from 'vite';

/**
 * The console's catalogues (src/i18n/catalogs/<code>.json: message id → ICU message) compiled at build, so the
 * browser gets Lingui's compiled form and never loads a message parser. `import('virtual:postern-catalog/de')` is one
 * chunk per language (src/i18n/languages.ts).
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
      const code = id.slice(RESOLVED.length);
      if (!CODE.test(code)) throw new Error(`not a language code: ${code}`);
      const file = join(catalogDir, `${code}.json`);
      this.addWatchFile(file);
      const source = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      // JSON.parse of a string literal parses faster than the same object as a JS literal.
      return `export default JSON.parse(${JSON.stringify(JSON.stringify(compileCatalog(source)))});`;
    },
  };
}
