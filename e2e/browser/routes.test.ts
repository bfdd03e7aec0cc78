import { storageKeys } from '@postern/contract';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN } from './server.js';
import { expectGone, expectPath, expectVisible, useConsoleHarness } from './fixture.js';

// Sign-in, a failed sign-in, the guards, the forced logout on a 401 and the not-found page (the spec's "Screens and
// routes", "States and transitions" and "Error catalogue").

async function fillSignIn(page: Page, password: string): Promise<void> {
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function sessionToken(page: Page): Promise<string> {
  const cookie = (await page.context().cookies()).find((c) => c.name === storageKeys.tokenCookie);
  if (!cookie) throw new Error('no token cookie after sign-in');
  return cookie.value;
}

describe('sign-in, session and routes', () => {
  const harness = useConsoleHarness();

  it('signs in through the form and shows the welcome page', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await expectPath(page, '/');
    // Cookie `token` (the spec's "Business constants and limits"): set by the server, SameSite Strict, lifetime from
    // the login answer's expires_in; HttpOnly and Path=/api so no script, ours or a neighbour's on another port, can
    // read it.
    const cookie = (await page.context().cookies()).find((c) => c.name === storageKeys.tokenCookie);
    expect(cookie).toMatchObject({ sameSite: 'Strict', path: '/api', httpOnly: true });
    const { expires_in } = (await (
      await fetch(`${harness.server.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      })
    ).json()) as { expires_in: number };
    expect(Math.abs((cookie?.expires ?? 0) - (Date.now() / 1000 + expires_in))).toBeLessThan(60);
    const token = cookie?.value ?? 'no token';
    const visibleToScripts = await page.evaluate(() => [
      document.cookie,
      JSON.stringify(Object.entries(localStorage)),
      JSON.stringify(Object.entries(sessionStorage)),
    ]);
    for (const text of visibleToScripts) expect(text).not.toContain(token);
    expect(await page.evaluate(() => document.cookie)).not.toContain('token=');
  });

  it('stays signed in across a reload, from the HttpOnly cookie alone', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await page.goto('/domains');
    await expectVisible(page.getByRole('heading', { name: 'Domains', exact: true }));
    await expectPath(page, '/domains');
    expect(await page.evaluate(() => document.cookie)).not.toContain('token=');
  });

  it("shows 'Invalid Credentials' for a wrong password and stays on the login screen", async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, 'not-the-password');
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Invalid Credentials' }));
    await expectPath(page, '/login');
    expect((await page.context().cookies()).some((c) => c.name === storageKeys.tokenCookie)).toBe(false);
  });

  it('sends a visitor without a session to login, and back to the page asked for after signing in', async () => {
    const page = await harness.openPage('/domains', { isSignedIn: false });
    await expectVisible(page.getByRole('button', { name: 'Sign in' }));
    await expectPath(page, '/login');
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('heading', { name: 'Domains', exact: true }));
    await expectPath(page, '/domains');
  });

  /** Ends this browser's session from outside, as a sign-out in another tab or a password change would. */
  async function revokeSessionOf(page: Page): Promise<void> {
    const response = await fetch(`${harness.server.baseUrl}/api/auth/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await sessionToken(page)}` },
    });
    expect(response.ok).toBe(true);
  }

  it('logs out when the session is revoked elsewhere and returns to the same page after signing in again', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await page.goto('/domains');
    await expectVisible(page.getByRole('heading', { name: 'Domains', exact: true }));

    // The domains page holds no event stream: the page learns of it from its next call (a 401). Opening the domain
    // form makes one (the owner choices list the nodes).
    await revokeSessionOf(page);
    await page.getByRole('button', { name: 'Add Domain' }).first().click();

    await expectVisible(page.getByRole('button', { name: 'Sign in' }));
    await expectPath(page, '/login');
    await fillSignIn(page, ADMIN.password);
    await expectPath(page, '/domains');
    await expectVisible(page.getByRole('heading', { name: 'Domains', exact: true }));
  });

  it('signs out by itself when the session ends while a live page is open (its event stream ends)', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: 'session-node' });
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await page.goto(`/nodes/${node.id}`);
    await expectVisible(page.getByRole('button', { name: '+ Add Token' }));

    await revokeSessionOf(page);
    await expectVisible(page.getByRole('button', { name: 'Sign in' }));
    await expectPath(page, '/login');
    await fillSignIn(page, ADMIN.password);
    await expectPath(page, `/nodes/${node.id}`);
    await expectVisible(page.getByRole('heading', { name: node.name }));
  });

  it('shows the not-found page for an unknown path, with a link back home', async () => {
    const page = await harness.openPage('/no/such/page');
    await expectVisible(
      page.getByText("Hmm...this page doesn't exist. Try searching for something else!", { exact: true }),
    );
    await page.getByRole('link', { name: 'Back To Home' }).click();
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await expectPath(page, '/');
  });

  it('says so when a node does not exist, with a way back to the list', async () => {
    const page = await harness.openPage('/nodes/999999');
    await expectVisible(page.getByText('Node not found', { exact: true }));
    await page.getByRole('button', { name: 'Back to nodes' }).click();
    await expectPath(page, '/nodes');
  });

  it('sends a signed-in user who opens login to home', async () => {
    const page = await harness.openPage('/login');
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    await expectPath(page, '/');
  });

  // Last in this file: it uses up this client's failed-login allowance on the server for the next minutes.
  it("says 'Too many attempts, try again later' once the server rate-limits sign-ins", async () => {
    const guess = () =>
      fetch(`${harness.server.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'intruder', password: 'guess-guess-guess' }),
      });
    await expect.poll(async () => (await guess()).status, { timeout: 10_000 }).toBe(429);
    const page = await harness.openPage('/login', { isSignedIn: false });
    await fillSignIn(page, ADMIN.password);
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Too many attempts, try again later' }));
    await page.getByRole('button', { name: 'Close alert' }).click();
    await expectGone(page.getByRole('alert'));
  });
});
