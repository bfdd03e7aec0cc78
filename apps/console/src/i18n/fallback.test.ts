import { describe, expect, it, vi } from 'vitest';

// A catalogue that lags behind English (the catalogue check fails the build, but a running console must still read):
// the missing text shows in English, never as its id.
describe('a string a language lacks', () => {
  it('falls back to English', async () => {
    vi.resetModules();
    vi.doMock('./languages', () => ({
      languages: [
        {
          code: 'en',
          name: 'English',
          load: () => Promise.resolve({ default: { 'login.submit': 'Sign in', 'login.or': 'or' } }),
        },
        { code: 'de', name: 'Deutsch', load: () => Promise.resolve({ default: { 'login.submit': 'Anmelden' } }) },
      ],
    }));
    const { activateLanguage, t } = await import('./i18n');
    await activateLanguage('de');
    expect(t('login.submit')).toBe('Anmelden');
    expect(t('login.or')).toBe('or');
    vi.doUnmock('./languages');
  });
});
