import { describe, expect, it } from 'vitest';
import { appendLogLines } from './log-buffer';

const numbered = (from: number, count: number) => Array.from({ length: count }, (_, i) => `line ${from + i}`);

describe('appendLogLines', () => {
  it('appends a batch after the lines already shown', () => {
    expect(appendLogLines(['a'], ['b', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('keeps at most 1000 lines and drops the oldest', () => {
    const lines = appendLogLines(numbered(1, 990), numbered(991, 25));
    expect(lines).toHaveLength(1000);
    expect(lines[0]).toBe('line 16');
    expect(lines.at(-1)).toBe('line 1015');
  });

  it('keeps only the newest lines of a single batch larger than the cap', () => {
    expect(appendLogLines([], numbered(1, 5), 3)).toEqual(['line 3', 'line 4', 'line 5']);
  });
});
