import { storageKeys } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { ADMIN } from './server.js';
import { dialog, expectGone, expectPath, expectVisible, useConsoleHarness, UNTIL_SHOWN } from './fixture.js';

// The shell: sidebar state remembered, the mobile sidebar closing on Escape or a click outside, the theme kept
// in local storage, help menu and sign-out (the spec's "Shell", "States and transitions" and
// "Business constants and limits").

describe('shell', () => {
  const harness = useConsoleHarness();

  it('starts with the sidebar collapsed and remembers it expanded across a reload', async () => {
    const page = await harness.openPage('/');
    const sidebar = page.getByRole('complementary', { name: 'Sidebar' });
    await expectVisible(sidebar.getByRole('button', { name: 'Expand sidebar' }));
    expect(await sidebar.getByText('Pages', { exact: true }).isVisible()).toBe(false);

    await sidebar.getByRole('button', { name: 'Expand sidebar' }).click();
    await expectVisible(sidebar.getByText('Pages', { exact: true }));
    expect(await page.evaluate((key) => localStorage.getItem(key), storageKeys.sidebarExpanded)).toBe('true');

    await page.reload();
    await expectVisible(sidebar.getByRole('button', { name: 'Collapse sidebar' }));
    await expectVisible(sidebar.getByText('Domain Names', { exact: true }));
  });

  it('closes the mobile sidebar on Escape and on a click outside', async () => {
    const page = await harness.openPage('/', { viewport: 'phone' });
    const link = page.getByRole('complementary', { name: 'Sidebar' }).getByRole('link', { name: 'Client / Nodes' });
    const open = page.getByRole('button', { name: 'Open sidebar' });

    await open.click();
    await expectVisible(link);
    await page.keyboard.press('Escape');
    await expect
      .poll(() => link.evaluate((element) => element.getBoundingClientRect().right), UNTIL_SHOWN)
      .toBeLessThanOrEqual(0);

    await open.click();
    await expect
      .poll(() => link.evaluate((element) => element.getBoundingClientRect().left), UNTIL_SHOWN)
      .toBeGreaterThanOrEqual(0);
    await page.mouse.click(370, 600);
    await expect
      .poll(() => link.evaluate((element) => element.getBoundingClientRect().right), UNTIL_SHOWN)
      .toBeLessThanOrEqual(0);

    await open.click();
    await link.click();
    await expectVisible(page.getByRole('heading', { name: 'Client / Nodes' }));
  });

  it('keeps the chosen theme across a reload', async () => {
    const page = await harness.openPage('/', { theme: 'light' });
    const isDark = () => page.evaluate(() => document.documentElement.classList.contains('dark'));
    expect(await isDark()).toBe(false);
    await page.getByRole('button', { name: /^Theme: light/ }).click();
    await expect.poll(isDark, UNTIL_SHOWN).toBe(true);
    expect(await page.evaluate((key) => localStorage.getItem(key), storageKeys.theme)).toBe('dark');
    await page.reload();
    await expectVisible(page.getByRole('button', { name: /^Theme: dark/ }));
    expect(await isDark()).toBe(true);
  });

  it('follows the system colour scheme in auto', async () => {
    const page = await harness.openPage('/', { theme: 'auto' });
    const isDark = () => page.evaluate(() => document.documentElement.classList.contains('dark'));
    await expectVisible(page.getByRole('button', { name: /^Theme: auto/ }));
    expect(await isDark()).toBe(false);
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(isDark, UNTIL_SHOWN).toBe(true);
  });

  it('offers Documentation and Contact us in the help menu, and the repository, help and sponsor links', async () => {
    const page = await harness.openPage('/');
    await expectVisible(page.getByRole('link', { name: 'Source repository' }).first());
    await expectVisible(page.getByRole('main').getByRole('link', { name: 'Documentation' }));
    await expectVisible(page.getByRole('main').getByRole('link', { name: 'Sponsor' }));
    await expectVisible(page.getByRole('main').getByRole('link', { name: 'Install the CLI' }));
    await page.getByRole('button', { name: 'Help' }).click();
    await expectVisible(page.getByRole('menuitem', { name: 'Documentation' }));
    await expectVisible(page.getByRole('menuitem', { name: 'Contact us' }));
    await page.keyboard.press('Escape');
    await expectGone(page.getByRole('menuitem', { name: 'Documentation' }));
  });

  it('keeps keyboard focus inside an open dialog', async () => {
    const page = await harness.openPage('/domains');
    await page.getByRole('button', { name: 'Add Domain' }).first().click();
    await expectVisible(dialog(page, 'Add Domain'));
    const focusedInDialog = () => page.evaluate(() => document.activeElement?.closest('[role="dialog"]') !== null);
    for (const key of [
      'Tab',
      'Tab',
      'Tab',
      'Tab',
      'Tab',
      'Tab',
      'Shift+Tab',
      'Shift+Tab',
      'Shift+Tab',
      'Shift+Tab',
      'Shift+Tab',
      'Shift+Tab',
    ]) {
      await page.keyboard.press(key);
      expect(await focusedInDialog(), `focus after ${key}`).toBe(true);
    }
  });

  // This file seeds nothing, so the server has no domains and no gateway nodes.
  it('shows the empty states with their actions', async () => {
    const page = await harness.openPage('/domains');
    await expectVisible(page.getByText('No domains yet', { exact: true }));
    await page.getByRole('button', { name: 'Add Domain' }).last().click();
    await expectVisible(dialog(page, 'Add Domain'));

    await page.goto('/nodes');
    await page
      .getByRole('group', { name: 'Filter nodes' })
      .getByRole('button', { name: 'Gateways', exact: true })
      .click();
    await expectVisible(page.getByText('No nodes yet', { exact: true }));
    await page.getByRole('button', { name: 'Add Node' }).click();
    await expectVisible(dialog(page, 'New Node'));
  });

  it('signs out: the session ends on the server and the login screen shows', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
    const token = (await page.context().cookies()).find((c) => c.name === storageKeys.tokenCookie)?.value ?? '';

    // Hold the server's answer to see the spinner the button shows meanwhile.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/auth/logout', async (route) => {
      await held;
      await route.continue();
    });
    const signOut = page.getByRole('button', { name: 'Sign out' });
    await signOut.click();
    await expectVisible(signOut.getByRole('status', { name: 'Signing out' }));
    expect(await signOut.isDisabled()).toBe(true);
    release();
    await expectVisible(page.getByRole('button', { name: 'Sign in' }));
    await expectPath(page, '/login');
    expect((await page.context().cookies()).some((c) => c.name === storageKeys.tokenCookie)).toBe(false);
    const after = await fetch(`${harness.server.baseUrl}/api/nodes`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
  });
});
