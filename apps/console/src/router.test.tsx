import { createMemoryHistory } from '@tanstack/react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readRedirectTarget, readToken, storeToken } from './lib/session';
import { createAppRouter } from './router';

async function landOn(path: string): Promise<string> {
  const router = createAppRouter(createMemoryHistory({ initialEntries: [path] }));
  await router.load();
  return router.state.location.pathname;
}

/** What GET /api/auth/session answers: the session behind the server's HttpOnly cookie, or a 401. */
function serverSession(session: { token: string; expires_in: number } | null) {
  const fetchMock = vi.fn(() =>
    Promise.resolve(
      new Response(JSON.stringify(session ?? { message: 'Authentication required' }), { status: session ? 200 : 401 }),
    ),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('route guards (console spec: Screens and routes)', () => {
  beforeEach(() => serverSession(null));
  afterEach(() => vi.unstubAllGlobals());

  it('sends a visitor without a session to /login and remembers the page asked for', async () => {
    expect(await landOn('/nodes/4')).toBe('/login');
    expect(readRedirectTarget()).toBe('/nodes/4');
  });

  it('sends a signed-in user away from /login to home', async () => {
    storeToken('abc', 60);
    expect(await landOn('/login')).toBe('/');
  });

  it('lets a signed-in user open app pages, and unknown paths reach the not-found route', async () => {
    storeToken('abc', 60);
    expect(await landOn('/domains')).toBe('/domains');
    const router = createAppRouter(createMemoryHistory({ initialEntries: ['/no/such/page'] }));
    await router.load();
    expect(router.state.matches.at(-1)?.routeId).toBe('/signed-in/$');
  });

  it('after a page load, takes the session from the server (its cookie) instead of sending the user to login', async () => {
    const fetchMock = serverSession({ token: 'from-cookie', expires_in: 300 });
    expect(await landOn('/domains')).toBe('/domains');
    expect(readToken()).toBe('from-cookie');
    expect(fetchMock).toHaveBeenCalledWith('/api/auth/session', expect.objectContaining({ credentials: 'include' }));
    expect(await landOn('/login')).toBe('/');
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });
});
