import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { activateLanguage, loadMoreTexts } from './i18n/i18n';
import { forgetSession } from './lib/session';

// The console's texts in English, the spec's words the tests look for.
await activateLanguage('en');
await loadMoreTexts();

// Vitest runs without globals, so Testing Library cannot register its own cleanup.
afterEach(() => {
  cleanup();
  localStorage.clear();
  forgetSession();
});
