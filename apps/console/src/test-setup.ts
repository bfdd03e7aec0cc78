import { cleanup } from '@testing-library/react';
import { afterEach, vi } from 'vitest';
import { activateLanguage, loadMoreTexts } from './i18n/i18n';
import { forgetSession } from './lib/session';
import { dismissToast, getToasts } from './lib/toast-store';

// The console's texts in English, the spec's words the tests look for.
await activateLanguage('en');
await loadMoreTexts();

// Vitest runs without globals, so Testing Library cannot register its own cleanup. Most files share their worker's
// modules (vitest.isolation.ts at the root): what a test leaves in module state (a toast still up, fake timers, the
// session) must not reach the next file's tests.
afterEach(() => {
  cleanup();
  localStorage.clear();
  sessionStorage.clear();
  forgetSession();
  for (const toast of getToasts()) dismissToast(toast.id);
  vi.useRealTimers();
});
