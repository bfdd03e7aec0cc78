import { describe, expect, it } from 'vitest';
import { chooseMenuItem, dialog, expectVisible, uniqueName, useConsoleHarness } from './fixture.js';

// The audit log page: entries with who and what, filters, and live updates; and the remaining time of a
// temporary exposure on a service row, set from the service form.

describe('audit log and temporary exposure', () => {
  const harness = useConsoleHarness();

  it('lists changes, filters them, and shows a new one live', async () => {
    const name = uniqueName('audited');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name });
    await harness.seed('PATCH', `/api/nodes/${node.id}`, { name: `${name}-renamed` });
    const page = await harness.openPage('/');
    await page.getByRole('link', { name: 'Audit Log' }).click();
    await expectVisible(page.getByRole('heading', { name: 'Audit Log' }));
    const table = page.getByRole('table');
    // Entries read as sentences; the fields changed are in the details.
    const renamed = `admin changed node ${name}-renamed (name)`;
    await expectVisible(table.getByText(renamed, { exact: true }));
    await table.getByRole('button', { name: `Details: ${renamed}` }).click();
    await expectVisible(table.getByText('node.update', { exact: true }));
    await expectVisible(table.getByText(`name: "${name}" → "${name}-renamed"`));

    await page.getByLabel('Action').fill('node.create');
    await page.getByRole('button', { name: 'Apply Filters' }).click();
    // The unfiltered list shows created nodes too: wait for the filtered answer to replace it.
    await expect.poll(async () => await table.getByText(/^admin changed node /).count(), { timeout: 10_000 }).toBe(0);
    await expectVisible(table.getByText(/^admin created node /).first());

    // Live: a change made elsewhere appears without a reload, under the same filter.
    const later = uniqueName('live');
    await harness.seed('POST', '/api/nodes', { name: later });
    await expectVisible(table.getByText(later).first());
  });

  it('sets a temporary exposure in the service form and shows the time left on the row', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('temp-node') });
    const name = uniqueName('temp');
    await harness.seed('POST', `/api/services/${node.id}/tcp`, { name, backendPort: 22, ttl: 3600 });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const row = page.getByRole('row').filter({ hasText: name });
    await expectVisible(row.getByText(/^Expires in (59m|1h)/));

    await chooseMenuItem(page, `Actions for ${name}`, 'Edit Service');
    const form = dialog(page, 'Edit TCP Service');
    await form.getByLabel('Expose For (Optional)').selectOption({ label: '1 day' });
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(row.getByText(/^Expires in 23h 59m/));
  });
});
