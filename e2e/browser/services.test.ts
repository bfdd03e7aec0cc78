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
  waitForPaint,
} from './fixture.js';

// Exposing HTTP and TCP services from a node, and switching public access off and on (the spec's "Screens and routes",
// "States and transitions" and "Error catalogue").

const EXPOSED_TITLE = 'Your Service is Now Publicly Available';

const servicesCard = (page: Page, title: 'HTTP Services' | 'TCP Services') =>
  page.locator('section').filter({ has: page.getByRole('heading', { name: title, exact: true }) });

/** The service-exposed dialog: checks the public address it shows and closes it; returns the address. */
async function closeExposedDialog(page: Page): Promise<string> {
  const exposed = dialog(page, EXPOSED_TITLE);
  await expectVisible(exposed);
  const url = (await exposed.getByRole('link').first().textContent()) ?? '';
  await exposed.getByRole('button', { name: 'Got it!' }).click();
  await expectGone(exposed);
  return url;
}

describe('services', () => {
  const harness = useConsoleHarness();

  it('exposes an HTTP service from the node page and shows its public URL', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('web-node') });
    const name = uniqueName('web');
    const page = await harness.openPage(`/nodes/${node.id}`);
    const card = servicesCard(page, 'HTTP Services');
    await expectVisible(card.getByText('No HTTP services yet'));
    await card.getByRole('button', { name: 'Add Service' }).first().click();

    const form = dialog(page, 'Expose HTTP Service');
    await form.getByLabel('Service Name').fill(name);
    await form.getByLabel('Public HTTP Path').fill('/shop');
    expect(await form.getByLabel('Backend Port').inputValue()).toBe('80');
    await form.getByRole('button', { name: 'Save' }).click();

    expect(await closeExposedDialog(page)).toMatch(/^https?:\/\/gateway\.test(:\d+)?\/shop\/?$/);
    await expectVisible(card.getByText(name, { exact: true }));
  });

  it('exposes a TCP service from the nodes list row menu and shows its public address', async () => {
    const nodeName = uniqueName('mqtt-node');
    await harness.seed('POST', '/api/nodes', { name: nodeName });
    const name = uniqueName('mqtt');
    const page = await harness.openPage('/nodes');
    await chooseMenuItem(page, `Actions for ${nodeName}`, 'Expose TCP');

    const form = dialog(page, 'Expose TCP Service');
    await form.getByLabel('Service Name').fill(name);
    expect(await form.getByLabel('Backend Port').inputValue()).toBe('1883');
    await form.getByRole('button', { name: 'Save' }).click();

    expect(await closeExposedDialog(page)).toMatch(/^tcp:\/\/gateway\.test:\d+$/);
  });

  it('disables and enables public access with confirmations and toasts', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('toggle-node') });
    const name = uniqueName('toggle');
    await harness.seed('POST', `/api/services/${node.id}/http`, { name, pathLocation: `/${name}`, backendPort: 8080 });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const row = servicesCard(page, 'HTTP Services').getByRole('row').filter({ hasText: name });
    await expectVisible(row.getByRole('img', { name: 'Public', exact: true }));

    await chooseMenuItem(page, `Actions for ${name}`, 'Disable Access');
    await acceptConfirmation(page, 'Disable Public Access', 'Yes, disable public access!');
    await expectVisible(toast(page, 'Service disabled from public access successfully!'));
    await expectVisible(row.getByRole('img', { name: 'Not public', exact: true }));

    await chooseMenuItem(page, `Actions for ${name}`, 'Enable Access');
    await acceptConfirmation(page, 'Enable Public Access', 'Yes, enable public access!');
    await expectVisible(toast(page, 'Service exposed successfully!'));
    await expectVisible(row.getByRole('img', { name: 'Public', exact: true }));
  });

  it("shows a service's details, edits it and deletes it", async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('edit-node') });
    const name = uniqueName('api');
    await harness.seed('POST', `/api/services/${node.id}/http`, {
      name,
      pathLocation: `/${name}`,
      backendPort: 3000,
      allowedIps: ['10.1.0.0/16'],
    });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const card = servicesCard(page, 'HTTP Services');

    await chooseMenuItem(page, `Actions for ${name}`, 'Info');
    const info = dialog(page, name);
    await expectVisible(info.getByText('10.1.0.0/16'));
    await expectVisible(info.getByRole('link', { name: `https://gateway.test:8443/${name}` }));
    await info.getByRole('button', { name: 'Got it!' }).click();
    await expectGone(info);

    await chooseMenuItem(page, `Actions for ${name}`, 'Edit Service');
    const form = dialog(page, 'Edit HTTP Service');
    expect(await form.getByLabel('Backend Port').inputValue()).toBe('3000');
    await form.getByLabel('Backend Port').fill('3001');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectGone(form);
    // The address is in the row twice (under the name on phones, in its column elsewhere): the one shown.
    await expectVisible(card.getByText(/:3001$/).filter({ visible: true }));

    await chooseMenuItem(page, `Actions for ${name}`, 'Delete Service');
    await acceptConfirmation(page, 'Delete Service', 'Yes, delete it!');
    await expectVisible(toast(page, 'Service deleted successfully!'));
    await expectVisible(card.getByText('No HTTP services yet'));
  });

  it.each(['desktop', 'phone'] as const)(
    'opens a row menu near the bottom of the window inside the window (%s)',
    async (viewport) => {
      const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('menu-node') });
      const name = uniqueName('low');
      await harness.seed('POST', `/api/services/${node.id}/http`, { name, pathLocation: `/${name}`, backendPort: 80 });
      const page = await harness.openPage(`/nodes/${node.id}`, { viewport });
      const button = page.getByRole('button', { name: `Actions for ${name}`, exact: true });
      await button.evaluate((element) => element.scrollIntoView({ block: 'end' }));
      await waitForPaint(page);
      await button.click();

      const menu = page.getByRole('menu', { name: `Actions for ${name}` });
      await expectVisible(menu);
      const box = await menu.boundingBox();
      const height = page.viewportSize()?.height ?? 0;
      expect(
        box && box.y >= 0 && box.y + box.height <= height,
        `menu at ${JSON.stringify(box)} in a window ${height}px high`,
      ).toBe(true);
      await menu.getByRole('menuitem', { name: 'Delete Service' }).click();
      await expectVisible(dialog(page, 'Delete Service'));
    },
  );
});
