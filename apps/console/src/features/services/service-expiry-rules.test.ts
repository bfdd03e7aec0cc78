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
});
