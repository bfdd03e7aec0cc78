import { createMemoryHistory } from '@tanstack/react-router';
import { afterEach, describe, expect, it } from 'vitest';
import { clearToken, readRedirectTarget, storeToken } from './lib/session';
import { createAppRouter } from './router';

async function landOn(path: string): Promise<string> {
  const router = createAppRouter(createMemoryHistory({ initialEntries: [path] }));
  await router.load();
  return router.state.location.pathname;
}

describe('route guards (console-spec §2)', () => {
  afterEach(() => clearToken());

  it('sends a visitor without a token to /login and remembers the page asked for', async () => {
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
});
