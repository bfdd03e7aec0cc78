import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectVisible, startConsole, uniqueName, UNTIL_SHOWN, type ConsoleHarness } from './fixture.js';
import { startServer, type RunningServer } from './server.js';

// Finding things at scale (search, sort, page and page size kept in the URL, so Back returns to the view)
// and the keyboard basics around it (focus never falls to the body; route changes focus and announce the h1).

const rowNames = (page: Page) => page.locator('tbody tr td:nth-child(2) a').allTextContents();
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName.toLowerCase()}:${el.textContent.trim()}` : '';
  });

describe('finding nodes and keyboard focus', () => {
  let server: RunningServer;
  let harness: ConsoleHarness;

  beforeAll(async () => {
    server = await startServer();
    harness = await startConsole(server);
  });
  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('searches, sorts and pages the nodes list on the server, keeps the view in the URL, and Back returns to it', async () => {
    const prefix = uniqueName('find');
    for (let i = 0; i < 12; i++)
      await harness.seed('POST', '/api/nodes', { name: `${prefix}-${String(i).padStart(2, '0')}` });
    await harness.seed('POST', '/api/nodes', { name: uniqueName('other') });
    const page = await harness.openPage('/nodes');
    await page.getByRole('searchbox', { name: 'Search nodes by name or address' }).fill(prefix.toUpperCase());
    await expect.poll(() => new URL(page.url()).searchParams.get('q'), UNTIL_SHOWN).toBe(prefix.toUpperCase());
    await expectVisible(page.getByText('Showing 1 to 10 of 12 results'));

    await page.getByRole('button', { name: 'Name' }).click();
    await expect.poll(() => page.url(), UNTIL_SHOWN).toContain('sort=name');
    await page.getByRole('button', { name: 'Name' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('order'), UNTIL_SHOWN).toBe('desc');
    expect(page.getByRole('columnheader', { name: /Name/ })).toBeTruthy();
    await expect
      .poll(() => rowNames(page), UNTIL_SHOWN)
      .toEqual(Array.from({ length: 10 }, (_, i) => `${prefix}-${String(11 - i).padStart(2, '0')}`));

    // Next disables itself on the last page: focus goes to Previous, not to the body.
    await page.getByRole('button', { name: 'Next' }).focus();
    await page.keyboard.press('Enter');
    await expectVisible(page.getByText('Showing 11 to 12 of 12 results'));
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe('button:Previous');
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');

    await page.getByRole('link', { name: `${prefix}-00` }).click();
    await expectVisible(page.getByRole('heading', { level: 1, name: `${prefix}-00` }));
    // The new page's h1 takes focus, names the document and is announced politely.
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe(`h1:${prefix}-00`);
    await expect.poll(() => page.title(), UNTIL_SHOWN).toBe(`${prefix}-00 · Postern`);
    await expect.poll(() => page.getByTestId('route-announcer').textContent(), UNTIL_SHOWN).toBe(`${prefix}-00`);

    await page.goBack();
    await expectVisible(page.getByText('Showing 11 to 12 of 12 results'));
    expect(await page.getByRole('searchbox', { name: 'Search nodes by name or address' }).inputValue()).toBe(
      prefix.toUpperCase(),
    );
    expect(await rowNames(page)).toEqual([`${prefix}-01`, `${prefix}-00`]);
    expect(await page.getByRole('columnheader', { name: /Name/ }).getAttribute('aria-sort')).toBe('descending');

    // Page size is part of the URL too; a shared link opens the same view.
    await page.getByLabel('Rows per page').selectOption('25');
    await expectVisible(page.getByRole('link', { name: `${prefix}-11` }));
    expect(new URL(page.url()).searchParams.get('limit')).toBe('25');
    expect(await rowNames(page)).toHaveLength(12);
    const shared = await harness.openPage(new URL(page.url()).pathname + new URL(page.url()).search);
    await expectVisible(shared.getByRole('link', { name: `${prefix}-05` }));
    expect(await rowNames(shared)).toHaveLength(12);
  });

  it('row and Help menus follow the menu pattern, and focus returns to the trigger after Escape or a dialog', async () => {
    const name = uniqueName('menu');
    await harness.seed('POST', '/api/nodes', { name });
    const page = await harness.openPage(`/nodes?q=${name}`);
    const trigger = page.getByRole('button', { name: `Actions for ${name}` });
    await trigger.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe('button:View Node Details');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe('button:Edit Node');
    await page.keyboard.press('End');
    expect(await focused(page)).toBe('button:Delete Node');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe('button:View Node Details');
    await page.keyboard.press('ArrowUp');
    expect(await focused(page)).toBe('button:Delete Node');
    await page.keyboard.press('Home');
    expect(await focused(page)).toBe('button:View Node Details');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('menu').count(), UNTIL_SHOWN).toBe(0);
    expect(await trigger.evaluate((el) => el === document.activeElement)).toBe(true);

    // A dialog opened from a menu item gives focus back to the row's trigger when it closes.
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expectVisible(page.getByRole('dialog'));
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count(), UNTIL_SHOWN).toBe(0);
    await expect.poll(() => trigger.evaluate((el) => el === document.activeElement), UNTIL_SHOWN).toBe(true);

    // Tab closes the menu and moves on from its trigger.
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe('button:View Node Details');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.getByRole('menu').count(), UNTIL_SHOWN).toBe(0);
    expect(await focused(page)).not.toMatch(/^body:/);

    const help = page.getByRole('button', { name: 'Help' });
    await help.click();
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe('a:Documentation');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe('a:Contact us');
    await page.keyboard.press('Escape');
    await expect.poll(() => help.evaluate((el) => el === document.activeElement), UNTIL_SHOWN).toBe(true);
  });

  it('shows that a slow page is loading instead of the old range, then the new page', async () => {
    const prefix = uniqueName('slow');
    for (let i = 0; i < 12; i++) {
      const domain = `${prefix}-${String(i).padStart(2, '0')}.example.test`;
      await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    }
    const page = await harness.openPage(`/domains?q=${prefix}`);
    await expectVisible(page.getByText('Showing 1 to 10 of 12 results'));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/api\/domains\?.*page=2/, async (route) => {
      await released;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Next' }).click();
    await expectVisible(page.getByRole('status', { name: 'Loading the page' }));
    expect(await page.getByText('Showing 1 to 10 of 12 results').count()).toBe(0);
    release();
    await expectVisible(page.getByText('Showing 11 to 12 of 12 results'));
    expect(await page.getByRole('status', { name: 'Loading the page' }).count()).toBe(0);
  });

  it('says when a search matches nothing', async () => {
    const page = await harness.openPage(`/nodes?q=${uniqueName('nothing')}`);
    await expectVisible(page.getByRole('status').filter({ hasText: /No nodes match/ }));
  });

  it('signs in from a <main> landmark, focuses the first invalid field on a failed submit, and titles the page', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await expectVisible(page.getByRole('main').getByRole('heading', { level: 1 }));
    await page.getByLabel('Password').fill('something');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name), UNTIL_SHOWN)
      .toBe('username');
    expect(await page.title()).toBe('Sign in · Postern');
  });

  it('gives a not-found page an h1', async () => {
    const page = await harness.openPage('/no-such-page');
    await expectVisible(page.getByRole('heading', { level: 1, name: /404/ }));
  });
});
