import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { forgetSession } from './lib/session';

// Vitest runs without globals, so Testing Library cannot register its own cleanup.
afterEach(() => {
  cleanup();
  localStorage.clear();
  forgetSession();
});
