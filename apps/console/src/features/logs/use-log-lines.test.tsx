import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LogViewer } from './log-viewer';
import { FakeEventSource } from '../../test/fake-event-source';
import { useLogLines, type LogSource } from './use-log-lines';
import { storeToken } from '../../lib/session';

const latest = () => FakeEventSource.latest();
const numbered = (from: number, count: number) => Array.from({ length: count }, (_, i) => `[INFO] line ${from + i}`);

function LiveLog({ source }: { source: LogSource }) {
  return <LogViewer lines={useLogLines(source)} />;
}

describe('live log view', () => {
  beforeEach(() => {
    FakeEventSource.opened = [];
    vi.useFakeTimers();
    vi.stubGlobal('EventSource', FakeEventSource);
    // After a stream error the session is checked with a normal call before reconnecting; here it still holds.
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.resolve(new Response('{}', { status: 200 }))),
    );
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    storeToken('secret-session', 3600);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('opens the domain stream with the session token and shows each batch coloured by marker', () => {
    render(<LiveLog source={{ domain: 'app.example.com' }} />);
    const url = new URL(latest()?.url ?? '', 'http://localhost');
    expect(url.pathname).toBe('/api/logs/stream');
    expect(url.searchParams.get('domain')).toBe('app.example.com');
    expect(url.searchParams.get('token')).toBe('secret-session');

    act(() => latest()?.push(['[ERROR] upstream failed', 'plain line']));
    expect(screen.getByText('[ERROR] upstream failed').className).toContain('text-red-400');
    expect(screen.getByText('plain line').className).toContain('text-gray-300');
  });

  it('keeps the newest 1000 lines', () => {
    render(<LiveLog source={{ type: 'http', id: '7' }} />);
    act(() => latest()?.push(numbered(1, 600)));
    act(() => latest()?.push(numbered(601, 405)));
    const items = screen.getAllByRole('listitem');
    expect(items).toHaveLength(1000);
    expect(items[0]?.textContent).toBe('[INFO] line 6');
    expect(items.at(-1)?.textContent).toBe('[INFO] line 1005');
  });

  it('reconnects 1 s after an error, keeping the lines shown so far', async () => {
    render(<LiveLog source={{ type: 'tcp', id: '3' }} />);
    act(() => latest()?.push(['[INFO] before']));
    const first = latest();
    first?.fail();
    expect(first?.isClosed).toBe(true);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(999);
    });
    expect(FakeEventSource.opened).toHaveLength(1);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(1);
    });
    expect(FakeEventSource.opened).toHaveLength(2);
    act(() => latest()?.push(['[INFO] after']));
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['[INFO] before', '[INFO] after']);
  });

  it('starts an empty view on another source, and again when coming back', () => {
    const view = render(<LiveLog source={{ domain: 'a.example.com' }} />);
    const first = latest();
    act(() => first?.push(['[INFO] from a']));
    view.rerender(<LiveLog source={{ domain: 'b.example.com' }} />);
    expect(first?.isClosed).toBe(true);
    expect(screen.queryAllByRole('listitem')).toEqual([]);
    act(() => latest()?.push(['[INFO] from b']));
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['[INFO] from b']);
    view.rerender(<LiveLog source={{ domain: 'a.example.com' }} />);
    expect(screen.queryAllByRole('listitem')).toEqual([]);
  });

  it('closes the stream when the page is left and does not reconnect', async () => {
    const { unmount } = render(<LiveLog source={{ domain: 'app.example.com' }} />);
    latest()?.fail();
    unmount();
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(FakeEventSource.opened).toHaveLength(1);

    const view = render(<LiveLog source={{ domain: 'app.example.com' }} />);
    const live = latest();
    view.unmount();
    expect(live?.isClosed).toBe(true);
  });
});
