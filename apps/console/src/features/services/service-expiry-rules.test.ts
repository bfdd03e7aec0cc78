import { describe, expect, it } from 'vitest';
import { expiryBody, formatRemaining } from './service-expiry-rules';

describe('temporary exposure in the service form', () => {
  it('sends a ttl for a duration, null to clear, nothing to keep', () => {
    expect(expiryBody('3600')).toEqual({ ttl: 3600 });
    expect(expiryBody('none')).toEqual({ expiresAt: null });
    expect(expiryBody('')).toEqual({});
  });

  it('shows the time left in its two largest units', () => {
    expect(formatRemaining(3_599_000)).toBe('59m 59s');
    expect(formatRemaining(2 * 86_400_000 + 3 * 3600_000 + 120_000)).toBe('2d 3h');
    expect(formatRemaining(3600_000)).toBe('1h');
    expect(formatRemaining(-5)).toBe('0s');
  });

  it('words the units and puts two together as the language does', () => {
    const japanese = { d: '日', h: '時間', m: '分', s: '秒' };
    const say = (ms: number) =>
      formatRemaining(
        ms,
        (amount, unit) => `${amount}${japanese[unit]}`,
        (first, second) => `${first}${second}`,
      );
    expect(say(3_599_000)).toBe('59分59秒');
    expect(say(3600_000)).toBe('1時間');
    expect(say(0)).toBe('0秒');
  });
});
