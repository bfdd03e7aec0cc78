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
          load: () =>
            Promise.resolve({
              first: { 'login.submit': 'Sign in', 'login.or': 'or' },
              signin: () => Promise.resolve({ default: { 'login.title': 'Sign in to Postern' } }),
              home: () => Promise.resolve({ default: { 'attention.title': 'Needs attention' } }),
              more: () => Promise.resolve({ default: { 'nav.nodes': 'Client / Nodes', 'home.title': 'Welcome' } }),
            }),
        },
        {
          code: 'de',
          name: 'Deutsch',
          load: () =>
            Promise.resolve({
              first: { 'login.submit': 'Anmelden' },
              signin: () => Promise.resolve({ default: {} }),
              home: () => Promise.resolve({ default: {} }),
              more: () => Promise.resolve({ default: { 'home.title': 'Willkommen' } }),
            }),
        },
      ],
    }));
    const { activateLanguage, loadMoreTexts, t } = await import('./i18n');
    await activateLanguage('de');
    expect(t('login.submit')).toBe('Anmelden');
    expect(t('login.or')).toBe('or');
    // The rest of the texts, fetched with another screen, falls back the same way.
    await loadMoreTexts();
    expect(t('home.title')).toBe('Willkommen');
    expect(t('nav.nodes')).toBe('Client / Nodes');
    expect(t('login.or')).toBe('or');
    expect(t('attention.title')).toBe('Needs attention');
    expect(t('login.title')).toBe('Sign in to Postern');
    vi.doUnmock('./languages');
  });
});
