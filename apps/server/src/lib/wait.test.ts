import { describe, expect, it } from 'vitest';
import { waitUntil } from './wait.js';

describe('waitUntil', () => {
  it('goes on as soon as the condition holds, and takes async conditions', async () => {
    let polls = 0;
    expect(await waitUntil(async () => ++polls === 3, 60_000, 1)).toBe(true);
    expect(polls).toBe(3);
  });

  it('answers false once the deadline has passed, having asked at the deadline', async () => {
    let polls = 0;
    expect(await waitUntil(() => (polls++, false), 30, 5)).toBe(false);
    expect(polls).toBeGreaterThanOrEqual(2);
  });
});
