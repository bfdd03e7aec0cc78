import { describe, expect, it } from 'vitest';
import { getLogLineClass, NEUTRAL_LOG_CLASS } from './log-colour';

describe('getLogLineClass', () => {
  it.each([
    ['[ERROR] upstream timed out', 'text-red-400'],
    ['[WARN] slow response', 'text-yellow-300'],
    ['[WARNING] slow response', 'text-yellow-300'],
    ['[INFO] GET / 200', 'text-blue-400'],
    ['[DEBUG] headers parsed', 'text-green-400'],
  ])('colours %s by its marker', (line, expected) => {
    expect(getLogLineClass(line)).toBe(expected);
  });

  it('leaves lines without a marker neutral', () => {
    expect(getLogLineClass('Getting logs...')).toBe(NEUTRAL_LOG_CLASS);
    expect(getLogLineClass('ERROR without brackets')).toBe(NEUTRAL_LOG_CLASS);
  });

  it('lets the first marker in the line decide', () => {
    expect(getLogLineClass('2026-11-22 [INFO] body mentions [ERROR]')).toBe('text-blue-400');
  });
});
