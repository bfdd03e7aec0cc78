import type { TrafficPoint } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { barShares, clockTime, describePoint, MIN_ERROR_SHARE, niceMax, timeTicks } from './chart-scale';

const at = (hours: number, minutes: number) => new Date(2026, 10, 26, hours, minutes).toISOString();
const point = (minute: string, requests = 10, errors = 0): TrafficPoint => ({
  minute,
  requests,
  errors,
  bytesIn: 0,
  bytesOut: 0,
  p50Ms: null,
  p95Ms: null,
});

describe('chart scales', () => {
  it('labels an hour every 10 minutes and a day every 4 hours, on round times inside the points', () => {
    const hour = Array.from({ length: 60 }, (_, i) => point(at(11, 7 + i)));
    expect(timeTicks(hour, 1).map((tick) => tick.label)).toEqual([
      '11:10',
      '11:20',
      '11:30',
      '11:40',
      '11:50',
      '12:00',
    ]);
    expect(timeTicks(hour, 1)[0]?.position).toBe(3);
    // Ten-minute points starting at :34 are not on round times: the round time falls inside one of them.
    const day = Array.from({ length: 144 }, (_, i) =>
      point(new Date(Date.parse(at(0, 34)) + i * 600_000).toISOString()),
    );
    const ticks = timeTicks(day, 10);
    expect(ticks.map((tick) => tick.label)).toEqual(['04:00', '08:00', '12:00', '16:00', '20:00', '00:00']);
    expect(ticks[0]?.position).toBeCloseTo(20.6, 5);
  });

  it('rounds the value axis up and keeps errors visible however few', () => {
    expect(niceMax([0, 0])).toBe(1);
    expect(niceMax([3, 7])).toBe(10);
    expect(niceMax([120])).toBe(200);
    expect(barShares({ requests: 1000, errors: 1 }, 1000)).toEqual({ total: 1, errors: MIN_ERROR_SHARE });
    expect(barShares({ requests: 0, errors: 0 }, 10)).toEqual({ total: 0, errors: 0 });
  });

  it('says a point in words, the unfinished one as such', () => {
    const units = { unit: 'requests', errorUnit: '5xx' };
    expect(describePoint({ ...point(at(12, 3), 42, 3), p95Ms: 250 }, 1, false, units)).toBe(
      `${clockTime(at(12, 3))}: 42 requests, 3 5xx, p95 ≤ 250 ms`,
    );
    expect(describePoint(point(at(12, 4), 2), 1, true, units)).toBe('12:04 (so far): 2 requests, 0 5xx');
    expect(
      describePoint(point(at(12, 0), 5), 10, false, { unit: 'requests and connections', errorUnit: 'errors' }),
    ).toBe('12:00–12:10: 5 requests and connections, 0 errors');
  });
});
