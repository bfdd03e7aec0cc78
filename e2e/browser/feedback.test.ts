import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  acceptConfirmation,
  chooseMenuItem,
  dialog,
  expectGone,
  expectVisible,
  startConsole,
  uniqueName,
  UNTIL_SHOWN,
  type ConsoleHarness,
} from './fixture.js';
import { ADMIN, startServer, type RunningServer } from './server.js';

// The console says what happened when the gateway does not answer or fails (login, actions, downloads,
// live streams), the node page recovers after a gateway restart, and the first click on the gateway checkbox counts.

const errorToast = (page: Page, text: RegExp) => page.getByRole('alert').filter({ hasText: text });

describe('feedback when things fail', () => {
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

  async function signInWith(page: Page): Promise<void> {
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('says the gateway could not be reached, or failed, when signing in gets no answer or a 503', async () => {
    const page = await harness.openPage('/login', { isSignedIn: false });
    await page.route('**/api/auth/login', (route) => route.abort('connectionrefused'));
    await signInWith(page);
    await expectVisible(page.getByRole('alert').filter({ hasText: 'Network Error: the gateway could not be reached' }));
    expect(await page.getByText('Invalid Credentials').count()).toBe(0);

    await page.unroute('**/api/auth/login');
    await page.route('**/api/auth/login', (route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: '{"message":"down"}' }),
    );
    await signInWith(page);
    await expectVisible(
      page.getByRole('alert').filter({ hasText: 'The gateway could not sign you in right now (status 503)' }),
    );
  });

  it('counts the first click on the gateway checkbox while the name field shows its blur message', async () => {
    const page = await harness.openPage('/nodes');
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    await expectVisible(form);
    await form.getByLabel('Name', { exact: true }).focus();
    // Blurring the empty name shows "required" above the checkbox while the pointer is down on it.
    await form.getByLabel('This node is a gateway').click();
    expect(await form.getByLabel('This node is a gateway').isChecked()).toBe(true);
    await expectVisible(form.getByLabel('Gateway Network'));
  });

  it('shows an error toast when an action or a download gets no answer or a server error, and keeps the dialog', async () => {
    const name = uniqueName('fail');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name });
    const page = await harness.openPage('/nodes');

    await page.route(`**/api/nodes/${node.id}/disable`, (route) => route.abort('connectionrefused'));
    await chooseMenuItem(page, `Actions for ${name}`, 'Disconnect');
    await acceptConfirmation(page, 'Disconnect Node', 'Yes, disconnect!');
    await expectVisible(errorToast(page, /^Network Error: the gateway could not be reached/));

    await page.route(`**/api/nodes/${node.id}`, (route) =>
      route.request().method() === 'PATCH'
        ? route.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"Internal Server Error"}' })
        : route.continue(),
    );
    await chooseMenuItem(page, `Actions for ${name}`, 'Edit Node');
    const form = dialog(page, 'Edit Node');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(errorToast(page, /^Internal Server Error\. Try again in a moment\./));
    await expectVisible(form);
    await form.getByRole('button', { name: 'Cancel' }).click();
    await expectGone(form);

    await page.route(`**/api/nodes/${node.id}/download`, (route) => route.fulfill({ status: 502, body: '' }));
    await chooseMenuItem(page, `Actions for ${name}`, 'Download Config');
    await expectVisible(errorToast(page, /^Request failed with status code 502\./));
  });

  it('shows a banner while the gateway is down and the node page updates again after it restarts', async () => {
    const name = uniqueName('restart');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await expectVisible(page.getByText(name, { exact: true }).first());
    // The stream is open before the restart: a change made elsewhere shows live.
    const before = uniqueName('before');
    await expect
      .poll(async () => {
        await harness.seed('PATCH', `/api/nodes/${node.id}`, { name: before });
        return page.getByText(before, { exact: true }).count();
      }, UNTIL_SHOWN)
      .toBeGreaterThan(0);

    const banner = page
      .getByRole('status')
      .filter({ hasText: /Live updates are interrupted|The gateway cannot be reached/ });
    await server.restart(async () => {
      await expectVisible(banner);
    });
    const renamed = uniqueName('renamed');
    // The first retries back off (1 s, 2 s, …): the banner goes once the stream is back, then a change arrives live.
    await banner.waitFor({ state: 'hidden', timeout: 20_000 });
    await harness.seed('PATCH', `/api/nodes/${node.id}`, { name: renamed });
    await expectVisible(page.getByText(renamed, { exact: true }).first());
  });
});
