import { describe, expect, it } from 'vitest';
import { createCoalescer } from './serial.js';

/** A promise with its resolve and reject at hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createCoalescer', () => {
  it('keeps one run in flight and serves every caller arriving meanwhile with one queued run', async () => {
    const gates = [deferred<number>(), deferred<number>()];
    let runs = 0;
    const apply = createCoalescer(() => gates[runs++]?.promise ?? Promise.resolve(-1));
    const first = apply();
    const second = apply();
    const third = apply();
    expect(second).toBe(third);
    await settle();
    expect(runs).toBe(1);
    gates[0]?.resolve(1);
    expect(await first).toBe(1);
    await settle();
    expect(runs).toBe(2);
    gates[1]?.resolve(2);
    expect([await second, await third]).toEqual([2, 2]);
    expect(await apply()).toBe(-1);
    expect(runs).toBe(3);
  });

  it('still runs the queued run after the one in flight failed', async () => {
    const gate = deferred<string>();
    let runs = 0;
    const apply = createCoalescer(() => (++runs === 1 ? gate.promise : Promise.resolve('second')));
    const first = apply();
    const second = apply();
    gate.reject(new Error('nginx down'));
    await expect(first).rejects.toThrow('nginx down');
    await expect(second).resolves.toBe('second');
  });
});
