import { afterAll, expect } from 'vitest';
import { takeUncodedFieldErrors } from './message-code-check.js';

// After each test file: every 422 it provoked gave each field error a message code (message-code-check.ts).
afterAll(() => {
  expect(takeUncodedFieldErrors(), 'field errors without a message code (contract message-codes.ts)').toEqual([]);
});
