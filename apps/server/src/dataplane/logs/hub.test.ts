import { describe, expect, it, vi } from 'vitest';
import type { LogLine } from '../types.js';
import { createLogHub } from './hub.js';

const line = (over: Partial<LogLine>): LogLine => ({
  domain: 'app.example.com',
  type: 'http',
  serviceId: 1,
  text: '[INFO] x',
  ...over,
});

describe('createLogHub', () => {
  it('sends recent lines first, then only lines matching the filter', () => {
    const hub = createLogHub({ batchMs: 0 });
    hub.publish([line({ text: 'old' }), line({ domain: 'other.example.com', serviceId: 2, text: 'other' })]);
    const got: string[][] = [];
    hub.subscribe({ domain: 'app.example.com' }, (lines) => got.push(lines));
    hub.publish([line({ text: 'new' }), line({ domain: 'other.example.com', serviceId: 2, text: 'nope' })]);
    expect(got).toEqual([['old'], ['new']]);
  });

  it('follows one service by type and id, TCP separate from HTTP', () => {
    const hub = createLogHub({ batchMs: 0 });
    const got: string[] = [];
    hub.subscribe({ type: 'tcp', id: 1 }, (lines) => got.push(...lines));
    hub.publish([line({ text: 'http 1' }), line({ type: 'tcp', domain: null, text: 'tcp 1' })]);
    expect(got).toEqual(['tcp 1']);
  });

  it('batches live lines and stops after unsubscribe', () => {
    vi.useFakeTimers();
    try {
      const hub = createLogHub({ batchMs: 200 });
      const got: string[][] = [];
      const unsubscribe = hub.subscribe({ type: 'http', id: 1 }, (lines) => got.push(lines));
      hub.publish([line({ text: 'a' })]);
      hub.publish([line({ text: 'b' })]);
      expect(got).toEqual([]);
      vi.advanceTimersByTime(200);
      expect(got).toEqual([['a', 'b']]);
      unsubscribe();
      hub.publish([line({ text: 'c' })]);
      vi.advanceTimersByTime(200);
      expect(got).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps only the most recent lines per key', () => {
    const hub = createLogHub({ batchMs: 0, recentPerKey: 2 });
    hub.publish(['1', '2', '3'].map((text) => line({ text })));
    const got: string[][] = [];
    hub.subscribe({ type: 'http', id: 1 }, (lines) => got.push(lines));
    expect(got).toEqual([['2', '3']]);
  });
});
