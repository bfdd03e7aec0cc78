import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { describe, expect, it } from 'vitest';
import { languages } from './languages';

// The catalogue check (apps/console/README.md "Languages"): every language has exactly English's keys, each message
// parses as ICU and uses the same placeholders as its English source. A language that lags behind still shows the
// missing texts in English (i18n.ts), but the check keeps a release from shipping it.

const dir = join(import.meta.dirname, 'catalogs');
const read = (code: string): Record<string, string> =>
  JSON.parse(readFileSync(join(dir, `${code}.json`), 'utf8')) as Record<string, string>;

/** The differences of a catalogue from the source: what it misses and what English no longer has. */
function compareKeys(source: Record<string, string>, other: Record<string, string>) {
  return {
    missing: Object.keys(source).filter((key) => !(key in other)),
    extra: Object.keys(other).filter((key) => !(key in source)),
  };
}

/** The arguments a message fills (`{name}`, `{count, plural, …}`, also those inside plural and select branches). */
function placeholders(message: string): string[] {
  const names = new Set<string>();
  const walk = (tokens: unknown): void => {
    if (!Array.isArray(tokens)) return;
    for (const token of tokens) {
      if (!Array.isArray(token) || typeof token[0] !== 'string') continue;
      names.add(token[0]);
      const branches: unknown = token[2];
      if (typeof branches === 'object' && branches !== null) Object.values(branches).forEach(walk);
    }
  };
  walk(compileMessage(message));
  return [...names].sort();
}

const source = read('en');

describe('the catalogue check', () => {
  it('finds a missing key and one the source no longer has', () => {
    expect(compareKeys({ a: 'A', b: 'B' }, { a: 'A', c: 'C' })).toEqual({ missing: ['b'], extra: ['c'] });
    expect(placeholders('{count, plural, one {# node} other {# nodes}} on {name}')).toEqual(['count', 'name']);
    expect(placeholders('{done, select, yes {fertig} other {offen: {what}}}')).toEqual(['done', 'what']);
  });

  it('has a catalogue file for every language and a language for every catalogue file', () => {
    const files = readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.replace(/\.json$/, ''))
      .sort();
    expect(files).toEqual(languages.map((language) => language.code).sort());
  });

  it.each(languages.map((language) => language.code))('%s has exactly the keys of English', (code) => {
    expect(compareKeys(source, read(code))).toEqual({ missing: [], extra: [] });
  });

  it.each(languages.map((language) => language.code))(
    '%s: every message is valid ICU, not empty, with the placeholders of its English source',
    (code) => {
      const catalogue = read(code);
      for (const [id, message] of Object.entries(catalogue)) {
        expect(message.trim(), id).not.toBe('');
        expect(() => compileMessage(message), id).not.toThrow();
        expect(placeholders(message), id).toEqual(placeholders(source[id] ?? ''));
      }
    },
  );
});
