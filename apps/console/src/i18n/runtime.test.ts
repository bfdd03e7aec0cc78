import { compileMessage } from '@lingui/message-utils/compileMessage';
import { describe, expect, it } from 'vitest';
import { Translator, type Messages } from './runtime';

const compiled = (source: Record<string, string>): Messages =>
  Object.fromEntries(Object.entries(source).map(([id, text]) => [id, compileMessage(text) as Messages[string]]));

describe('the message runtime', () => {
  const translator = new Translator();
  translator.load(
    'en',
    compiled({
      plain: "Hmm...this page doesn't exist",
      fill: 'Sign in with {provider}',
      plural: '{count, plural, =0 {no nodes} one {# node} other {# nodes}} on {name}',
      select: 'found {n}{done, select, yes {, and repaired them.} other {; not yet.}}',
      nested: '{count, plural, one {# day} other {# days}} {done, select, yes {ago ({count})} other {left}}',
    }),
  );
  translator.activate('en');

  it('fills placeholders, plurals with exact matches and the count, selects', () => {
    expect(translator.translate('plain')).toBe("Hmm...this page doesn't exist");
    expect(translator.translate('fill', { provider: 'Okta' })).toBe('Sign in with Okta');
    expect(translator.translate('plural', { count: 0, name: 'a' })).toBe('no nodes on a');
    expect(translator.translate('plural', { count: 1, name: 'a' })).toBe('1 node on a');
    expect(translator.translate('plural', { count: 1234, name: 'a' })).toBe('1,234 nodes on a');
    expect(translator.translate('select', { n: 2, done: 'yes' })).toBe('found 2, and repaired them.');
    expect(translator.translate('select', { n: 2, done: 'no' })).toBe('found 2; not yet.');
    expect(translator.translate('nested', { count: 3, done: 'yes' })).toBe('3 days ago (3)');
  });

  it('inserts a value as text, never as a message (a node or service name is the tenant’s)', () => {
    const hostile = '{count, plural, other {#}} <img src=x> #';
    expect(translator.translate('fill', { provider: hostile })).toBe(`Sign in with ${hostile}`);
    expect(translator.translate('plural', { count: 2, name: hostile })).toBe(`2 nodes on ${hostile}`);
  });

  it('uses the plural rules and number format of the language', () => {
    const french = new Translator();
    french.load('fr', compiled({ days: '{n, plural, one {# jour} other {# jours}}' }));
    french.activate('fr');
    expect(french.translate('days', { n: 0 })).toBe('0 jour');
    expect(french.translate('days', { n: 1500 })).toBe('1\u202f500 jours');
  });

  it('answers the id for a text no catalogue has, and tells listeners of changes', () => {
    expect(translator.translate('missing')).toBe('missing');
    let heard = 0;
    const stop = translator.on(() => (heard += 1));
    translator.activate('en');
    stop();
    translator.activate('en');
    expect(heard).toBe(1);
  });
});
