import type { ServiceFigures, TrafficPoint } from '@postern/contract';
import { fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { activateLanguage } from '../../i18n/i18n';
import { ServiceRowFigures } from './service-row-figures';
import { Sparkline } from './sparkline';
import { TrafficChart } from './traffic-chart';

const points: TrafficPoint[] = Array.from({ length: 5 }, (_, i) => ({
  minute: new Date(2026, 10, 26, 12, i).toISOString(),
  requests: [10, 20, 30, 40, 1][i] ?? 0,
  errors: i === 2 ? 3 : 0,
  bytesIn: 0,
  bytesOut: 0,
  p50Ms: null,
  p95Ms: null,
}));

describe('traffic chart', () => {
  it('is read by keyboard: the last finished minute first, the unfinished one said as such', () => {
    render(
      <TrafficChart points={points} stepMinutes={1} label="Requests per minute" unit="requests" errorUnit="5xx" />,
    );
    const chart = screen.getByRole('slider', { name: 'Requests per minute' });
    expect(chart.getAttribute('aria-valuetext')).toBe('12:03: 40 requests, 0 5xx');
    fireEvent.keyDown(chart, { key: 'End' });
    expect(chart.getAttribute('aria-valuetext')).toBe('12:04 (so far): 1 requests, 0 5xx');
    fireEvent.keyDown(chart, { key: 'ArrowLeft' });
    fireEvent.keyDown(chart, { key: 'ArrowLeft' });
    expect(chart.getAttribute('aria-valuetext')).toBe('12:02: 30 requests, 3 5xx');
    expect(screen.getByTestId('chart-tooltip').textContent).toBe('12:02: 30 requests, 3 5xx');
    fireEvent.keyDown(chart, { key: 'Home' });
    expect(chart.getAttribute('aria-valuenow')).toBe('0');
    fireEvent.keyDown(chart, { key: 'ArrowLeft' });
    expect(chart.getAttribute('aria-valuenow')).toBe('0');
  });

  it('draws errors in red and the unfinished minute hollow, not as a drop', () => {
    const { container } = render(
      <TrafficChart points={points} stepMinutes={1} label="Requests" unit="requests" errorUnit="5xx" />,
    );
    expect(container.querySelectorAll('[data-error="true"]')).toHaveLength(1);
    const partial = container.querySelector('[data-partial] rect');
    expect(partial?.getAttribute('stroke-dasharray')).toBe('3 2');
    expect(partial?.getAttribute('class')).toContain('fill-transparent');
  });
});

describe('sparkline', () => {
  it('leaves the unfinished last minute out and marks the minutes with errors', () => {
    const { container } = render(
      <Sparkline values={[5, 5, 5, 0]} errors={[0, 2, 0, 0]} isLastPartial label="15 req in the last hour" />,
    );
    const line = container.querySelector('polyline')?.getAttribute('points') ?? '';
    expect(line.split(' ')).toHaveLength(3);
    // A flat line: no drop to zero at the end.
    expect(new Set(line.split(' ').map((xy) => xy.split(',')[1])).size).toBe(1);
    expect(container.querySelectorAll('[data-error="true"]')).toHaveLength(1);
  });
});

describe('a service row’s figures', () => {
  afterEach(() => activateLanguage('en'));
  const figures: ServiceFigures = {
    type: 'http',
    id: 1,
    nodeId: 1,
    requests: 1234,
    errors: 2,
    bytes: 1536,
    spark: [1, 2, 3],
    errorSpark: [0, 2, 0],
    health: {
      type: 'http',
      id: 1,
      nodeId: 1,
      state: 'down',
      since: null,
      lastCheckedAt: null,
      lastError: 'connection refused',
      latencyMs: 1500,
      intervalSeconds: 30,
      timeoutSeconds: 5,
    },
  };

  it('are the spec’s forms in English and the language’s words and figures in German', async () => {
    const { unmount } = render(<ServiceRowFigures figures={figures} type="http" />);
    expect(screen.getByTestId('service-figures').textContent).toBe('Down1234 req/h · 2 err · 1.50 KB');
    expect(screen.getByRole('img', { name: '1234 req in the last hour, 2 with errors' })).toBeTruthy();
    expect(screen.getByText('Down').getAttribute('title')).toBe('connection refused · 1500 ms');
    unmount();
    await activateLanguage('de');
    render(<ServiceRowFigures figures={figures} type="http" />);
    expect(screen.getByTestId('service-figures').textContent).toBe('Ausgefallen1.234 Anfr./h · 2 Fehler · 1,50 KB');
    expect(screen.getByRole('img', { name: '1.234 Anfragen in der letzten Stunde, 2 davon mit Fehlern' })).toBeTruthy();
    // The server's words (why the check failed) stay as sent.
    expect(screen.getByText('Ausgefallen').getAttribute('title')).toBe('connection refused · 1.500 ms');
  });
});
