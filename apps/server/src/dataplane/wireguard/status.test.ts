import { describe, expect, it } from 'vitest';
import type { WgPeerStatus } from '../types.js';
import { createStatusPoller, statusFromHandshake } from './status.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const secondsAgo = (s: number): number => NOW / 1000 - s;

describe('statusFromHandshake', () => {
  it('is online within 150 s, idle within 5 min, offline after or when never', () => {
    expect(statusFromHandshake(secondsAgo(0), NOW)).toBe('online');
    expect(statusFromHandshake(secondsAgo(149), NOW)).toBe('online');
    expect(statusFromHandshake(secondsAgo(150), NOW)).toBe('idle');
    expect(statusFromHandshake(secondsAgo(299), NOW)).toBe('idle');
    expect(statusFromHandshake(secondsAgo(300), NOW)).toBe('offline');
    expect(statusFromHandshake(0, NOW)).toBe('offline');
  });
});

describe('createStatusPoller', () => {
  const peer = (key: string, over: Partial<WgPeerStatus> = {}): WgPeerStatus => ({
    publicKey: key,
    endpoint: '203.0.113.5:40000',
    allowedIps: [],
    latestHandshake: secondsAgo(10),
    transferRx: 1,
    transferTx: 2,
    ...over,
  });

  function setup() {
    let peers: WgPeerStatus[] = [];
    let now = NOW;
    let dumps = 0;
    const ticks: (() => void)[] = [];
    const poller = createStatusPoller({
      dump: () => {
        dumps++;
        return Promise.resolve(peers);
      },
      now: () => now,
      every: (_ms, tick) => {
        ticks.push(tick);
        return () => ticks.splice(0);
      },
    });
    const changes: string[][] = [];
    poller.onChange((keys) => changes.push(keys));
    return {
      poller,
      changes,
      setPeers: (p: WgPeerStatus[]) => {
        peers = p;
      },
      advance: (ms: number) => {
        now += ms;
      },
      dumps: () => dumps,
      ticks,
    };
  }

  it('tells listeners only about peers whose status, address or counters changed', async () => {
    const t = setup();
    t.setPeers([peer('A'), peer('B')]);
    await t.poller.poll();
    expect(t.changes).toEqual([['A', 'B']]);
    expect(t.poller.get('A')).toEqual({
      status: 'online',
      clientIp: '203.0.113.5',
      latestHandshakeTimestamp: new Date(secondsAgo(10) * 1000).toISOString(),
      transferRx: 1,
      transferTx: 2,
    });

    await t.poller.poll();
    expect(t.changes).toHaveLength(1);

    t.setPeers([peer('A', { transferRx: 99 }), peer('B')]);
    await t.poller.poll();
    expect(t.changes[1]).toEqual(['A']);
  });

  it('notices a peer going idle with time alone, and a removed peer', async () => {
    const t = setup();
    t.setPeers([peer('A'), peer('B')]);
    await t.poller.poll();
    t.advance(200_000);
    t.setPeers([peer('A')]);
    await t.poller.poll();
    expect(t.changes[1]).toEqual(['A', 'B']);
    expect(t.poller.get('A')?.status).toBe('idle');
    expect(t.poller.get('B')).toBeUndefined();
  });

  it('polls once per tick however many listeners there are', async () => {
    const t = setup();
    for (let i = 0; i < 50; i++) t.poller.onChange(() => undefined);
    t.poller.start();
    t.ticks[0]?.();
    await t.poller.poll();
    expect(t.dumps()).toBeLessThanOrEqual(2);
    t.poller.stop();
    expect(t.ticks).toHaveLength(0);
  });

  it('shows every node offline while the tunnel cannot be read, reports it once, and recovers', async () => {
    const errors: unknown[] = [];
    const changes: string[][] = [];
    let fail = false;
    const poller = createStatusPoller({
      dump: () => (fail ? Promise.reject(new Error('wg missing')) : Promise.resolve([peer('A')])),
      now: () => NOW,
      onError: (err) => errors.push(err),
    });
    poller.onChange((keys) => changes.push(keys));
    await poller.poll();
    fail = true;
    await poller.poll();
    await poller.poll();
    expect(errors).toHaveLength(1);
    expect(poller.get('A')).toBeUndefined();
    expect(changes).toEqual([['A'], ['A']]);
    fail = false;
    await poller.poll();
    expect(poller.get('A')?.status).toBe('online');
  });
});
