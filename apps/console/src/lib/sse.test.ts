import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearToken, readRedirectTarget, readToken, setSessionNavigator, storeToken } from './session';
import { FakeEventSource } from '../test/fake-event-source';
import { openStream } from './sse';

/** Long past any reconnect: nothing may happen in it. */
const QUIET_MS = 60_000;

const TOKEN = 'secret-session-token';
const latest = () => FakeEventSource.latest();
const openedCount = () => FakeEventSource.opened.length;

/** The session check's answer: a status, or no response at all. */
function answerChecksWith(status: number | 'network-down') {
  const fetchMock = vi.fn((_url: string, _init?: RequestInit) =>
    status === 'network-down'
      ? Promise.reject(new TypeError('Failed to fetch'))
      : Promise.resolve(new Response(JSON.stringify({ message: 'x' }), { status })),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

function openLogStream({ reconnects = true } = {}) {
  const path = '/api/logs/stream';
  const query = { domain: 'app.example.com' };
  return openStream({
    path,
    query,
    schema: z.array(z.string()),
    onMessage: vi.fn(),
    reconnectMs: reconnects ? 1000 : undefined,
  });
}

/** Fails the latest stream and lets the session check settle. */
async function failLatest(): Promise<void> {
  latest()?.fail();
  await vi.advanceTimersByTimeAsync(0);
}

/** Advances to just before and just after `ms`, returning whether a new stream opened exactly at `ms`. */
async function reopensAfter(ms: number): Promise<boolean> {
  const before = openedCount();
  await vi.advanceTimersByTimeAsync(ms - 1);
  if (openedCount() !== before) return false;
  await vi.advanceTimersByTimeAsync(1);
  return openedCount() === before + 1;
}

describe('event stream errors', () => {
  let navigate: ReturnType<typeof vi.fn<(to: string) => Promise<void>>>;
  let consoleError: ReturnType<typeof vi.spyOn>;

  beforeEach(() => {
    FakeEventSource.opened = [];
    vi.useFakeTimers();
    vi.stubGlobal('EventSource', FakeEventSource);
    consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    navigate = vi.fn(() => Promise.resolve());
    setSessionNavigator(navigate);
    window.history.replaceState(null, '', '/domains/app.example.com/logs');
    storeToken(TOKEN, 3600);
  });
  afterEach(() => {
    setSessionNavigator(null);
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    clearToken();
  });

  it('signs out once through the API client when the session has expired, and does not reconnect', async () => {
    const fetchMock = answerChecksWith(401);
    openLogStream();
    await failLatest();

    // The check, then the sign-out telling the server to drop its cookie (the spec's "States and transitions": logout
    // clears the token).
    expect(fetchMock.mock.calls.map(([url]) => url)).toEqual(['/api/nodes?page=1&limit=1', '/api/auth/logout']);
    const [, init] = fetchMock.mock.calls[0] ?? [];
    expect(new Headers(init?.headers).get('Authorization')).toBe(`Bearer ${TOKEN}`);
    expect(readToken()).toBeNull();
    expect(readRedirectTarget()).toBe('/domains/app.example.com/logs');
    expect(navigate).toHaveBeenCalledTimes(1);
    expect(navigate).toHaveBeenCalledWith('/login');

    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(openedCount()).toBe(1);
    expect(latest()?.isClosed).toBe(true);
  });

  it('signs out on a 403 or 429 from the check as on any call (console spec: States and transitions), so the stream stops knocking', async () => {
    for (const status of [403, 429]) {
      FakeEventSource.opened = [];
      storeToken(TOKEN, 3600);
      answerChecksWith(status);
      openLogStream();
      await failLatest();
      await vi.advanceTimersByTimeAsync(QUIET_MS);
      expect(readToken(), `status ${status}`).toBeNull();
      expect(openedCount(), `status ${status}`).toBe(1);
    }
    expect(navigate).toHaveBeenCalledTimes(2);
  });

  it('goes to login without asking the server when the session token has already run out', async () => {
    const fetchMock = answerChecksWith(200);
    openLogStream();
    clearToken();
    await failLatest();
    expect(fetchMock).not.toHaveBeenCalled();
    expect(navigate).toHaveBeenCalledWith('/login');
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(openedCount()).toBe(1);
  });

  it('reconnects while the session holds, 1 s after an error of a stream that had opened (console spec: Business constants and limits)', async () => {
    const fetchMock = answerChecksWith(200);
    openLogStream();
    for (let attempt = 1; attempt <= 4; attempt++) {
      latest()?.open();
      await failLatest();
      expect(await reopensAfter(1000), `reopen ${attempt} after 1 s`).toBe(true);
    }
    expect(fetchMock).toHaveBeenCalledTimes(4);
    expect(navigate).not.toHaveBeenCalled();
    expect(new URL(latest()?.url ?? '', 'http://x').searchParams.get('token')).toBe(TOKEN);
  });

  it('waits twice as long after each further failure without opening, up to 30 s, and reports retrying', async () => {
    answerChecksWith('network-down');
    const states: string[] = [];
    openStream({
      path: '/api/logs/stream',
      schema: z.array(z.string()),
      onMessage: vi.fn(),
      reconnectMs: 1000,
      onStateChange: (state) => states.push(state),
    });
    for (const ms of [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]) {
      await failLatest();
      expect(await reopensAfter(ms), `reopen after ${ms} ms`).toBe(true);
    }
    expect(states.slice(0, 3)).toEqual(['connecting', 'retrying', 'retrying']);
    latest()?.open();
    expect(states.at(-1)).toBe('open');
    await failLatest();
    expect(await reopensAfter(1000), 'back to 1 s once it had opened').toBe(true);
  });

  it('keeps the session and reconnects when the check gets no answer or a server error', async () => {
    for (const answer of ['network-down', 503] as const) {
      FakeEventSource.opened = [];
      answerChecksWith(answer);
      const close = openLogStream();
      await failLatest();
      expect(await reopensAfter(1000), `${answer}: first`).toBe(true);
      await failLatest();
      expect(await reopensAfter(2000), `${answer}: second`).toBe(true);
      close();
    }
    expect(readToken()).toBe(TOKEN);
  });

  it('checks the session but stays closed when the stream does not reconnect (node detail)', async () => {
    const fetchMock = answerChecksWith(200);
    openLogStream({ reconnects: false });
    await failLatest();
    expect(fetchMock).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(openedCount()).toBe(1);
  });

  it('neither reconnects nor signs out when the page is left during the check', async () => {
    const fetchMock = vi.fn(
      (_url: string, init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) => {
          init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        }),
    );
    vi.stubGlobal('fetch', fetchMock);
    const close = openLogStream();
    latest()?.fail();
    close();
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(fetchMock.mock.calls[0]?.[1]?.signal?.aborted).toBe(true);
    expect(openedCount()).toBe(1);
    expect(navigate).not.toHaveBeenCalled();
  });

  it('keeps the session token out of the console log', async () => {
    answerChecksWith(401);
    openLogStream();
    await failLatest();
    expect(consoleError).toHaveBeenCalled();
    expect(JSON.stringify(consoleError.mock.calls)).not.toContain(TOKEN);
  });
});
