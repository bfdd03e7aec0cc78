import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  forgetSession,
  logout,
  readRedirectTarget,
  readToken,
  restoreSession,
  saveRedirectTarget,
  setSessionNavigator,
  storeToken,
} from './session';

function answerWith(status: number, body?: unknown) {
  const fetchMock = vi.fn((_url: string, _init?: RequestInit) =>
    Promise.resolve(
      new Response(body === undefined ? null : JSON.stringify(body), {
        status,
        headers: { 'Content-Type': 'application/json' },
      }),
    ),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('session token (console spec: States and transitions, Business constants and limits; docs/api.md "Session cookie")', () => {
  it('keeps the token in memory only, never in a script-readable cookie or storage', () => {
    const setCookie = vi.spyOn(document, 'cookie', 'set');
    storeToken('abc.def', 3600);
    expect(readToken()).toBe('abc.def');
    expect(setCookie).not.toHaveBeenCalled();
    expect(document.cookie).not.toContain('abc.def');
    expect(JSON.stringify(Object.entries(localStorage))).not.toContain('abc.def');
  });

  it('forgets the token when expires_in has passed', () => {
    vi.useFakeTimers();
    storeToken('abc', 60);
    vi.advanceTimersByTime(59_000);
    expect(readToken()).toBe('abc');
    vi.advanceTimersByTime(1_000);
    expect(readToken()).toBeNull();
  });
});

describe('restoring the session after a page load', () => {
  it('asks GET /api/auth/session once, with credentials, and keeps the token it answers', async () => {
    const fetchMock = answerWith(200, { token: 'from-cookie', expires_in: 120 });
    const answers = await Promise.all([restoreSession(), restoreSession()]);
    expect(answers).toEqual([true, true]);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0] ?? [];
    expect(url).toBe('/api/auth/session');
    expect(init?.credentials).toBe('include');
    expect(readToken()).toBe('from-cookie');
    expect(await restoreSession()).toBe(true);
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it('does not ask while a token is in memory', async () => {
    const fetchMock = answerWith(200, { token: 'from-cookie', expires_in: 120 });
    storeToken('signed-in-here', 60);
    expect(await restoreSession()).toBe(true);
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('is signed out on a 401, an odd answer or no answer, and does not ask again until a sign-in', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const failures = [
      () => answerWith(401, { message: 'no' }),
      () => answerWith(200, { nope: true }),
      () =>
        vi.stubGlobal(
          'fetch',
          vi.fn(() => Promise.reject(new TypeError('Failed to fetch'))),
        ),
    ];
    for (const failing of failures) {
      forgetSession();
      failing();
      expect(await restoreSession()).toBe(false);
      expect(readToken()).toBeNull();
    }
    const fetchMock = answerWith(200, { token: 'later', expires_in: 60 });
    expect(await restoreSession()).toBe(false);
    expect(fetchMock).not.toHaveBeenCalled();
    storeToken('signed-in', 60);
    expect(await restoreSession()).toBe(true);
  });
});

describe('redirect target', () => {
  it("defaults to '/'", () => {
    expect(readRedirectTarget()).toBe('/');
  });

  it('keeps a path, but never the login screen or another origin', () => {
    saveRedirectTarget('/domains');
    expect(readRedirectTarget()).toBe('/domains');
    saveRedirectTarget('/login');
    expect(readRedirectTarget()).toBe('/');
    localStorage.setItem('redirect', '//evil.example/');
    expect(readRedirectTarget()).toBe('/');
  });
});

describe('logout', () => {
  afterEach(() => setSessionNavigator(null));

  it('ends the session on the server, clears the token, saves the current path and navigates to /login', async () => {
    const navigate = vi.fn(() => Promise.resolve());
    setSessionNavigator(navigate);
    const fetchMock = answerWith(204);
    storeToken('abc', 60);
    window.history.replaceState(null, '', '/nodes/3');
    await logout();
    expect(readToken()).toBeNull();
    expect(readRedirectTarget()).toBe('/nodes/3');
    expect(navigate).toHaveBeenCalledWith('/login');
    const [url, init] = fetchMock.mock.calls[0] ?? [];
    expect(url).toBe('/api/auth/logout');
    expect(init).toMatchObject({ method: 'POST', credentials: 'include', headers: { Authorization: 'Bearer abc' } });
    // The cookie the server may still hold is not asked for again in this page.
    answerWith(200, { token: 'abc', expires_in: 60 });
    expect(await restoreSession()).toBe(false);
  });

  it('still signs out here when the server cannot be reached', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const navigate = vi.fn(() => Promise.resolve());
    setSessionNavigator(navigate);
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.reject(new TypeError('Failed to fetch'))),
    );
    storeToken('abc', 60);
    await logout();
    expect(readToken()).toBeNull();
    expect(navigate).toHaveBeenCalledWith('/login');
  });

  it('a second sign-out while the first waits for the server joins it: no login screen before the answer', async () => {
    const navigate = vi.fn(() => Promise.resolve());
    setSessionNavigator(navigate);
    let answer: (response: Response) => void = () => undefined;
    const fetchMock = vi.fn(() => new Promise<Response>((resolve) => (answer = resolve)));
    vi.stubGlobal('fetch', fetchMock);
    storeToken('abc', 60);
    const first = logout();
    const second = logout(); // a live stream dropped when the token went, and its session check signs out too
    await Promise.resolve();
    expect(navigate).not.toHaveBeenCalled();
    answer(new Response(null, { status: 204 }));
    await Promise.all([first, second]);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(navigate).toHaveBeenCalledTimes(1);
  });

  it('loads /login directly when navigation fails', async () => {
    setSessionNavigator(() => Promise.reject(new Error('router gone')));
    const assign = vi.spyOn(window.location, 'assign').mockImplementation(() => undefined);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await logout();
    expect(assign).toHaveBeenCalledWith('/login');
  });
});
