import { afterEach, describe, expect, it } from 'vitest';
import {
  activateLanguage,
  chooseLanguage,
  initialLanguage,
  LANGUAGE_STORAGE_KEY,
  pickLanguage,
  t,
  withSlot,
} from './i18n';

afterEach(() => activateLanguage('en'));

describe('the console language', () => {
  it('follows the stored choice, else the browser, else English', () => {
    expect(pickLanguage('ja', ['de-DE', 'en'])).toBe('ja');
    expect(pickLanguage(null, ['de-DE', 'en'])).toBe('de');
    expect(pickLanguage('klingon', ['fr-CA'])).toBe('fr');
    expect(pickLanguage(null, ['pt-PT'])).toBe('pt-BR');
    expect(pickLanguage(null, ['zh'])).toBe('zh-CN');
    expect(pickLanguage(null, ['zh-TW', 'es'])).toBe('es');
    expect(pickLanguage(null, ['nl', 'sv'])).toBe('en');
    expect(pickLanguage(null, [])).toBe('en');
  });

  it('shows the chosen language, names it on <html lang> and remembers it', async () => {
    await chooseLanguage('de');
    expect(t('login.submit')).toBe('Anmelden');
    expect(t('login.serverError', { status: 503 })).toContain('(Status 503)');
    expect(document.documentElement.lang).toBe('de');
    expect(localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe('de');
    expect(initialLanguage()).toBe('de');
  });

  it('speaks English with the spec’s words', async () => {
    await activateLanguage('en');
    expect(t('notFound.text')).toBe("Hmm...this page doesn't exist. Try searching for something else!");
    expect(t('nav.nodes')).toBe('Client / Nodes');
    expect(document.documentElement.lang).toBe('en');
  });

  it('splits a message around an element slot in the language’s own order', async () => {
    await activateLanguage('ja');
    expect(withSlot('shell.signedInAs', 'username', { role: 'X' })).toEqual(['', '（X）としてサインイン中']);
    await activateLanguage('en');
    expect(withSlot('shell.signedInAs', 'username', { role: 'Owner' })).toEqual(['Signed in as ', ' (Owner)']);
  });
});
