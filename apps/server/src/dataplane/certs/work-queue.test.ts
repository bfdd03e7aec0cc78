import { describe, expect, test } from 'vitest';
import { createWorkQueue } from './work-queue.js';

const noop = { onError: () => undefined };

describe('work queue', () => {
  test('runs nothing before open(), then everything in order, one at a time', async () => {
    const queue = createWorkQueue();
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`start ${name}`);
      await Promise.resolve();
      log.push(`end ${name}`);
    };
    const runs = [queue.add('a', job('a'), noop), queue.add('b', job('b'), noop)];
    await Promise.resolve();
    expect(log).toEqual([]);
    queue.open();
    await Promise.all(runs);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  test('a key already queued shares its run; a throw is handed to onError and the line goes on', async () => {
    const queue = createWorkQueue();
    let runs = 0;
    const errors: unknown[] = [];
    const first = queue.add('a', () => Promise.reject(new Error('boom')), { onError: (err) => errors.push(err) });
    const same = queue.add(
      'a',
      async () => {
        runs++;
      },
      noop,
    );
    const next = queue.add(
      'b',
      async () => {
        runs++;
      },
      noop,
    );
    expect(same).toBe(first);
    queue.open();
    await next;
    await queue.drained();
    expect(runs).toBe(1);
    expect(errors).toHaveLength(1);
  });
});
