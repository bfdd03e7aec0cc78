import type { TrafficPoint } from '@postern/contract';
import { formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';

// The pure part of the traffic charts: where the time axis is labelled, how tall a bar is, and what a point says in
// words (the tooltip, and what a screen reader hears when the chart's cursor moves).

/** Label spacings a time axis may use, in minutes. */
const TICK_SPACINGS = [5, 10, 15, 30, 60, 120, 180, 240, 360, 720];
const MAX_TICKS = 6;

/** `HH:MM` in the browser's time zone. */
export function clockTime(iso: string): string {
  const date = new Date(iso);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

/** A label of the time axis: `position` counts points from the left edge (2.5: the middle of the third). */
export type Tick = { position: number; label: string };

/**
 * Round times to label on the time axis (every 15 minutes for an hour, every 4 hours for a day; at most six), each
 * placed where it falls inside its point's span (points of several minutes need not start on a round time).
 */
export function timeTicks(points: readonly Pick<TrafficPoint, 'minute'>[], stepMinutes: number): Tick[] {
  const span = points.length * stepMinutes;
  const spacing =
    TICK_SPACINGS.find((candidate) => candidate >= stepMinutes && span / candidate <= MAX_TICKS) ??
    TICK_SPACINGS[TICK_SPACINGS.length - 1] ??
    60;
  const ticks: Tick[] = [];
  points.forEach((point, index) => {
    const date = new Date(point.minute);
    const minuteOfDay = date.getHours() * 60 + date.getMinutes();
    const round = Math.ceil(minuteOfDay / spacing) * spacing;
    if (round >= minuteOfDay + stepMinutes) return;
    const at = new Date(date.getTime() + (round - minuteOfDay) * 60_000);
    ticks.push({ position: index + (round - minuteOfDay) / stepMinutes, label: clockTime(at.toISOString()) });
  });
  return ticks;
}

/** A round top for the value axis (1, 2, 5 × 10ⁿ) at or above the largest value. */
export function niceMax(values: readonly number[]): number {
  const max = Math.max(1, ...values);
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].find((factor) => factor * power >= max) ?? 10;
  return step * power;
}

/** Errors stay visible however few: a bar with an error is at least this share of the chart's height. */
export const MIN_ERROR_SHARE = 0.04;

/** Heights (shares of the chart, 0..1) of a point's whole bar and of its errors at the bottom of it. */
export function barShares(
  point: Pick<TrafficPoint, 'requests' | 'errors'>,
  max: number,
): { total: number; errors: number } {
  const total = point.requests / max;
  const errors = point.errors > 0 ? Math.min(Math.max(point.errors / max, MIN_ERROR_SHARE), 1) : 0;
  return { total: Math.max(total, errors), errors };
}

export type ChartUnits = {
  /** What is counted: `requests`, `connections`, `requests and connections`. */
  unit: string;
  /** What an error is: `5xx`, `failed`, `errors`. */
  errorUnit: string;
};

/**
 * One point in words: `12:03: 42 requests, 3 5xx` (a span for points of several minutes: `12:00–12:10`); the
 * unfinished current minute says so, so a low count does not read as an outage.
 */
export function describePoint(point: TrafficPoint, stepMinutes: number, isPartial: boolean, units: ChartUnits): string {
  const start = clockTime(point.minute);
  const when =
    stepMinutes === 1
      ? start
      : `${start}–${clockTime(new Date(Date.parse(point.minute) + stepMinutes * 60_000).toISOString())}`;
  const figures = [`${formatNumber(point.requests)} ${units.unit}`, `${formatNumber(point.errors)} ${units.errorUnit}`];
  if (point.p95Ms !== null) figures.push(`p95 ≤ ${formatNumber(point.p95Ms)} ms`);
  return t('chart.point', { when: isPartial ? t('chart.soFar', { when }) : when, figures: figures.join(', ') });
}
