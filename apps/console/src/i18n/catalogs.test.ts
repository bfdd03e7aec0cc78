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

/**
 * A message in Lingui's compiled form (what the build ships), or an error when it is not valid ICU. Lingui's compiler
 * does not throw on a message it cannot parse: it logs and ships the message as plain text, braces and all. So a
 * message with a brace that compiled to plain text did not parse; and ICU wants an `other` branch in every plural and
 * select (the runtime falls back to it).
 */
function compiled(message: string): unknown[] {
  const tokens = compileMessage(message);
  const walk = (parts: unknown): void => {
    if (!Array.isArray(parts)) return;
    if (parts.every((part) => typeof part === 'string') && /[{}]/.test(parts.join('')))
      throw new Error(`does not parse: ${message}`);
    for (const token of parts) {
      if (!Array.isArray(token) || typeof token[0] !== 'string') continue;
      const branches: unknown = token[2];
      if (typeof branches !== 'object' || branches === null) continue;
      if (!('other' in branches)) throw new Error(`{${token[0]}, ${String(token[1])}} has no other branch`);
      Object.values(branches).forEach(walk);
    }
  };
  walk(tokens);
  return tokens;
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
  walk(compiled(message));
  return [...names].sort();
}

/**
 * What is wrong with a language's catalogue against the source (English), one line each: every key it misses, every
 * key English no longer has, and every message that is empty, not valid ICU, or fills other placeholders than its
 * English source. Empty: the catalogue is complete.
 */
export function catalogueProblems(source: Record<string, string>, other: Record<string, string>): string[] {
  const problems = Object.keys(source)
    .filter((key) => !(key in other))
    .map((key) => `missing: ${key}`);
  for (const [key, message] of Object.entries(other)) {
    if (!(key in source)) {
      problems.push(`not in English: ${key}`);
      continue;
    }
    if (message.trim() === '') {
      problems.push(`empty: ${key}`);
      continue;
    }
    let own: string[];
    try {
      own = placeholders(message);
    } catch (error) {
      problems.push(`not valid ICU: ${key} (${error instanceof Error ? error.message : String(error)})`);
      continue;
    }
    const english = placeholders(source[key] ?? '');
    if (own.join() !== english.join())
      problems.push(`other placeholders: ${key} has {${own.join('}, {')}}, English {${english.join('}, {')}}`);
  }
  return problems;
}

const source = read('en');

describe('the catalogue check', () => {
  const english = { 'a.title': 'Nodes', 'a.count': '{count, plural, one {# node} other {# nodes}} on {name}' };

  it('passes a complete catalogue, whatever its word order and plural forms', () => {
    const german = { 'a.title': 'Knoten', 'a.count': 'Auf {name}: {count, plural, one {# Knoten} other {# Knoten}}' };
    expect(catalogueProblems(english, german)).toEqual([]);
  });

  it('fails for a missing key, naming it', () => {
    expect(catalogueProblems(english, { 'a.title': 'Knoten' })).toEqual(['missing: a.count']);
  });

  it('fails for a key English no longer has', () => {
    expect(catalogueProblems(english, { ...english, 'a.gone': 'Weg' })).toEqual(['not in English: a.gone']);
  });

  it('fails for a message that is not valid ICU, or empty', () => {
    for (const broken of [
      '{count, plural, one {# Knoten}',
      '{count, plural, one {# Knoten}} auf {name',
      '{count, plural, one {# Knoten}} auf {name}',
    ]) {
      const problems = catalogueProblems(english, { ...english, 'a.count': broken });
      expect(problems, broken).toHaveLength(1);
      expect(problems[0], broken).toMatch(/^not valid ICU: a\.count/);
    }
    expect(catalogueProblems(english, { ...english, 'a.title': ' ' })).toEqual(['empty: a.title']);
  });

  it('fails for a placeholder that differs from English, also inside plural and select branches', () => {
    expect(
      catalogueProblems(english, { ...english, 'a.count': '{count, plural, other {# Knoten}} auf {nom}' }),
    ).toEqual(['other placeholders: a.count has {count}, {nom}, English {count}, {name}']);
    expect(
      catalogueProblems(
        { 'a.done': '{done, select, yes {done: {what}} other {open}}' },
        { 'a.done': '{done, select, yes {fertig} other {offen: {was}}}' },
      ),
    ).toEqual(['other placeholders: a.done has {done}, {was}, English {done}, {what}']);
  });

  it('has a catalogue file for every language and a language for every catalogue file', () => {
    const files = readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.replace(/\.json$/, ''))
      .sort();
    expect(files).toEqual(languages.map((language) => language.code).sort());
  });

  it.each(languages.map((language) => language.code))(
    '%s has exactly the keys of English, each a valid ICU message with the placeholders of its English source',
    (code) => {
      expect(catalogueProblems(source, read(code))).toEqual([]);
    },
  );
});
