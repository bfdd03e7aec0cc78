import { describe, expect, it } from 'vitest';
import { createCoalescer, createSingleFlight } from './serial.js';

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

describe('createSingleFlight', () => {
  it('serves every caller while a run is in flight with that run, and starts a new one only after it settled', async () => {
    const gates = [deferred<number>(), deferred<number>()];
    let runs = 0;
    const tick = createSingleFlight(() => gates[runs++]?.promise ?? Promise.resolve(-1));
    const first = tick();
    expect(tick()).toBe(first);
    await settle();
    expect(runs).toBe(1);
    gates[0]?.resolve(1);
    expect(await first).toBe(1);
    await settle();
    expect(runs).toBe(1);
    const second = tick();
    expect(runs).toBe(2);
    gates[1]?.resolve(2);
    expect(await second).toBe(2);
  });

  it('lets the next call start a run after one failed', async () => {
    let runs = 0;
    const tick = createSingleFlight(async () => {
      if (++runs === 1) throw new Error('wg busy');
      return runs;
    });
    const first = tick();
    expect(tick()).toBe(first);
    await expect(first).rejects.toThrow('wg busy');
    await expect(tick()).resolves.toBe(2);
  });
});
