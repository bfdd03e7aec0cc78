import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  acceptConfirmation,
  chooseMenuItem,
  dialog,
  expectGone,
  expectVisible,
  useConsoleHarness,
  toast,
  uniqueName,
} from './fixture.js';

// A node's personal access tokens: add, copy once, revoke, delete, with the exact confirmation texts
// (the spec's "Node Access Tokens card" and "Error catalogue").

const tokensCard = (page: Page) =>
  page.locator('section').filter({ has: page.getByRole('heading', { name: 'Node Access Tokens', exact: true }) });

describe('node access tokens', () => {
  const harness = useConsoleHarness();

  it('adds a token, shows it once with a copy button, revokes it and deletes it', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('pat-node') });
    // A new node comes with the token its connect command uses; remove it so the card starts empty.
    const existing = await harness.seed<{ data: { id: number }[] }>('GET', `/api/nodes/${node.id}/pats`);
    for (const token of existing.data) await harness.seed('DELETE', `/api/nodes/${node.id}/pats/${token.id}`);
    const name = uniqueName('ci');
    const page = await harness.openPage(`/nodes/${node.id}`);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness.server.baseUrl });
    const card = tokensCard(page);
    await expectVisible(card.getByText('No Access Tokens yet'));

    await card.getByRole('button', { name: '+ Add Token' }).click();
    const form = dialog(page, 'Access Token Configuration');
    await form.getByLabel('Name', { exact: true }).fill(name);
    // Expiry: the picker starts empty, offers no day before today; pick the 15th of next month.
    const expiry = form.getByRole('button', { name: 'Expire At (Optional)' });
    expect(await expiry.textContent()).toContain('Select a date');
    await expiry.click();
    const calendar = form.getByRole('dialog', { name: 'Choose a date' });
    if (new Date().getDate() > 1)
      expect(await calendar.getByRole('button', { name: '1', exact: true }).isDisabled()).toBe(true);
    await calendar.getByRole('button', { name: 'Next month' }).click();
    await calendar.getByRole('button', { name: '15', exact: true }).click();
    const next = new Date(new Date().getFullYear(), new Date().getMonth() + 1, 15);
    const expected = `${String(next.getMonth() + 1).padStart(2, '0')}/15/${next.getFullYear()}`;
    expect(await expiry.textContent()).toContain(expected);
    await form.getByRole('button', { name: 'Save' }).click();

    const created = dialog(page, 'New Access Token Generated');
    await expectVisible(created.getByText('The token is only visible once. Make sure to store it securely.'));
    await expectVisible(created.getByText(expected));
    const secret = await created.getByRole('textbox', { name: 'Token', exact: true }).inputValue();
    expect(secret).toMatch(/^pstn_/);
    await created.getByRole('button', { name: 'Copy token' }).click();
    await expectVisible(created.getByRole('button', { name: 'Copied' }));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    // The check mark goes back to the copy icon after 2 s.
    await created.getByRole('button', { name: 'Copy token' }).waitFor({ state: 'visible', timeout: 4000 });
    await created.getByRole('button', { name: 'Got it!' }).click();
    await expectGone(created);

    const row = card.getByRole('row').filter({ hasText: name });
    await expectVisible(row.getByText('Active', { exact: true }));
    expect(await page.content()).not.toContain(secret);

    await chooseMenuItem(page, `Actions for token ${name}`, 'Revoke');
    await acceptConfirmation(page, 'Revoke Personal Access Token', 'Yes, revoke token!');
    await expectVisible(toast(page, 'Personal Access Token revoked successfully!'));
    await expectVisible(row.getByText('Revoked', { exact: true }));

    await chooseMenuItem(page, `Actions for token ${name}`, 'Delete');
    await acceptConfirmation(page, 'Delete Personal Access Token', 'Yes, delete it!');
    await expectVisible(toast(page, 'Personal Access Token deleted successfully!'));
    await expectGone(row);
    await expectVisible(card.getByText('No Access Tokens yet'));
  });

  it('pages the tokens by 5', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('many-pats') });
    for (let i = 0; i < 5; i++) await harness.seed('POST', `/api/nodes/${node.id}/pats`, { name: `extra-${i}` });
    const { total } = await harness.seed<{ total: number }>('GET', `/api/nodes/${node.id}/pats?page=1&limit=5`);
    expect(total).toBe(6);
    const page = await harness.openPage(`/nodes/${node.id}`);
    const card = tokensCard(page);
    const pagination = card.getByRole('navigation', { name: 'Pagination' });
    await expectVisible(pagination.getByText('Showing 1 to 5 of 6 results', { exact: true }));
    await expect.poll(() => card.getByRole('row').count(), { timeout: 5000 }).toBe(6);
    await pagination.getByRole('button', { name: 'Next' }).click();
    await expectVisible(pagination.getByText('Showing 6 to 6 of 6 results', { exact: true }));

    // Deleting the only token of the last page steps back to a page that has rows; one page needs no pagination.
    const last = (await card.getByRole('row').nth(1).getByRole('cell').first().textContent()) ?? '';
    await chooseMenuItem(page, `Actions for token ${last}`, 'Delete');
    await acceptConfirmation(page, 'Delete Personal Access Token', 'Yes, delete it!');
    await expectGone(pagination);
    await expect.poll(() => card.getByRole('row').count(), { timeout: 5000 }).toBe(6);
  });

  it("shows a token whose expiry has passed as 'Expired'", async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('expiry-node') });
    const expireAt = new Date(Date.now() + 24 * 3600_000).toISOString();
    await harness.seed('POST', `/api/nodes/${node.id}/pats`, { name: 'short-lived', expireAt });
    // The browser's clock two days ahead: the token's expiry now lies in the past.
    const page = await harness.openPage('about:blank');
    await page.clock.setSystemTime(Date.now() + 2 * 24 * 3600_000);
    await page.goto(`/nodes/${node.id}`);
    const row = tokensCard(page).getByRole('row').filter({ hasText: 'short-lived' });
    await expectVisible(row.getByText('Expired', { exact: true }));
    await expectVisible(
      tokensCard(page).getByRole('row').filter({ hasText: 'default' }).getByText('Active', { exact: true }),
    );
  });
});
