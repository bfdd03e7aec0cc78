import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LatestWins } from './snapshots.js';

// The routes snapshot (what a fresh nginx master loads) is O(n) to write: a burst of pushes must not write it over and
// over while it lasts (dataplane/README.md "Bursts").
describe('the routes snapshot during a burst of pushes', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const writer = (): { written: number[]; write: (value: number) => Promise<void> } => {
    const written: number[] = [];
    return {
      written,
      write: async (value) => {
        written.push(value);
        // A write takes a while (copy, serialise, fsync): offers go on meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    };
  };

  it('is written once the pushes pause, with the last one, and a few times at most while they go on', async () => {
    const { written, write } = writer();
    const latest = new LatestWins(write, { quietMs: 200, maxDelayMs: 5_000 });
    // A push every 50 ms for 12 s.
    for (let push = 1; push <= 240; push++) {
      latest.offer(push);
      await vi.advanceTimersByTimeAsync(50);
    }
    const duringBurst = written.length;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(duringBurst).toBeGreaterThan(0);
    expect(duringBurst).toBeLessThanOrEqual(3);
    expect(written.at(-1)).toBe(240);
    expect(written.length).toBe(duringBurst + 1);
  });

  it('is written at once by a flush (a reload must find the routes it pushed)', async () => {
    const { written, write } = writer();
    const latest = new LatestWins(write, { quietMs: 200, maxDelayMs: 5_000 });
    latest.offer(1);
    await vi.advanceTimersByTimeAsync(10);
    latest.offer(2);
    let flushed = false;
    void latest.flush().then(() => (flushed = true));
    // Only the write's own 20 ms, no quiet period waited for.
    await vi.advanceTimersByTimeAsync(25);
    expect(flushed).toBe(true);
    expect(written).toEqual([2]);
  });

  it('without a quiet period writes every offer that finds no write in flight', async () => {
    const { written, write } = writer();
    const latest = new LatestWins(write);
    latest.offer(1);
    await vi.advanceTimersByTimeAsync(100);
    latest.offer(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(written).toEqual([1, 2]);
  });
});
