import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { dialog, expectGone, expectVisible, openMenu, toast, uniqueName, useConsoleHarness } from './fixture.js';

// The small things an operator notices (service dialogs name the node, required marks, the node-ready
// dialog's ways to run a node, edit toasts, empty states, type badges, units, menus and scrolling) and gateways
// with several subnets.

type SeededNode = { id: number; name: string; address: string; token: string };

// The rows carry the type twice (under the name on phones, in its column elsewhere): the one shown.
const backgroundOf = (page: Page, text: string) =>
  page
    .getByText(text, { exact: true })
    .filter({ visible: true })
    .first()
    .evaluate((element) => getComputedStyle(element).backgroundColor);

describe('console details', () => {
  const harness = useConsoleHarness();

  it('names the node in the service dialog, marks required fields, and toasts an edit with the new address', async () => {
    const node = await harness.seed<SeededNode>('POST', '/api/nodes', { name: uniqueName('svc') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    // Empty states say what appears and what to do first.
    await expectVisible(
      page.getByText(
        'HTTP services of this node appear here with their public address. Start the service on the node, then add it here to publish it.',
      ),
    );
    await page.getByRole('button', { name: 'Add Service' }).first().click();
    const form = dialog(page, 'Expose HTTP Service');
    const nodeLine = form.getByLabel('Node', { exact: true });
    await expectVisible(nodeLine);
    expect(await nodeLine.textContent()).toBe(`Node${node.name}Node${node.address}`);
    expect(await form.getByLabel('Service Name', { exact: true }).getAttribute('aria-required')).toBe('true');
    expect(await form.getByLabel('Backend Port', { exact: true }).getAttribute('aria-required')).toBe('true');
    expect(await form.getByLabel('Public HTTP Path', { exact: true }).getAttribute('aria-required')).toBeNull();
    await form.getByLabel('Service Name', { exact: true }).fill('web');
    const domain = `${uniqueName('edit')}.example.test`;
    await form.getByLabel('Public Domain', { exact: true }).fill(domain);
    await form.getByRole('button', { name: 'Save' }).click();
    await dialog(page, 'Your Service is Now Publicly Available').getByRole('button', { name: 'Got it!' }).click();

    await (await openMenu(page, 'Actions for web')).getByRole('menuitem', { name: 'Edit Service' }).click();
    const edit = dialog(page, 'Edit HTTP Service');
    await edit.getByLabel('Public HTTP Path', { exact: true }).fill('/v2');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expectGone(edit);
    await expectVisible(toast(page, `Service updated successfully! It is now published at https://${domain}/v2`));
  });

  it("'Your Node is Ready' offers the CLI, the WireGuard file, Docker and Helm, with the token on screen once", async () => {
    const page = await harness.openPage('/nodes');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness.server.baseUrl });
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    expect(await form.getByLabel('Name', { exact: true }).getAttribute('aria-required')).toBe('true');
    await form.getByLabel('Name', { exact: true }).fill(uniqueName('ready'));
    await form.getByRole('button', { name: 'Save' }).click();
    const ready = dialog(page, 'Your Node is Ready');
    const token = await ready.getByRole('textbox', { name: 'Token', exact: true }).inputValue();
    for (const [way, label, start] of [
      ['Docker', 'Docker command', 'docker run'],
      ['Helm', 'Helm command', 'helm install'],
      ['CLI', 'Connect command', 'postern connect'],
    ] as const) {
      await ready.getByRole('button', { name: way, exact: true }).click();
      await expect
        .poll(() => ready.getByRole('textbox', { name: label }).inputValue())
        .toMatch(new RegExp(`^${start} `));
      await ready.getByRole('button', { name: `Copy ${label.toLowerCase()}` }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain(token);
    }
    expect((await page.content()).split(token)).toHaveLength(2);
    await ready.getByRole('button', { name: 'WireGuard', exact: true }).click();
    const download = page.waitForEvent('download');
    await ready.getByRole('button', { name: 'Download WireGuard config' }).click();
    expect((await download).suggestedFilename()).toMatch(/^postern-ready-.*\.conf$/);
  });

  it('tells Local, Node and Gateway apart by colour and word, and shows KB in the KB columns', async () => {
    await harness.seed('POST', '/api/nodes', { name: uniqueName('plain') });
    await harness.seed('POST', '/api/nodes', {
      name: uniqueName('gwb'),
      isGateway: true,
      gatewayNetwork: '192.168.91.0/24',
    });
    const page = await harness.openPage('/nodes');
    await expectVisible(page.getByText('Gateway', { exact: true }).filter({ visible: true }).first());
    const colours = await Promise.all(['Local', 'Node', 'Gateway'].map((type) => backgroundOf(page, type)));
    expect(new Set(colours).size).toBe(3);
    await expectVisible(page.getByRole('columnheader', { name: 'Received (KB)' }));
    const cells = await page.getByRole('row').nth(1).getByRole('cell').allTextContents();
    expect(cells[4]).toMatch(/^\d[\d,]*\.\d\d$/);
  });

  it('keeps a row menu open while the page scrolls on a phone, and closes it once its button has left the window', async () => {
    for (let i = 0; i < 4; i++) await harness.seed('POST', '/api/nodes', { name: uniqueName('scroll') });
    const page = await harness.openPage('/nodes', { viewport: 'phone' });
    // A page longer than the phone's window, as a long list is (this short one would not scroll).
    await page.evaluate(() => (document.body.style.paddingBottom = '3000px'));
    const label = 'Actions for Gateway (local)';
    const menu = await openMenu(page, label);
    const scrolled = page.evaluate(
      () => new Promise((resolve) => window.addEventListener('scroll', resolve, { once: true, capture: true })),
    );
    await page.mouse.wheel(0, 40);
    await scrolled;
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await expectVisible(menu);
    // The list moved with its button.
    const [buttonBox, menuBox] = [
      await page.getByRole('button', { name: label, exact: true }).boundingBox(),
      await menu.boundingBox(),
    ];
    expect(Math.abs((menuBox?.y ?? 0) - ((buttonBox?.y ?? 0) + (buttonBox?.height ?? 0) + 4))).toBeLessThan(2);
    // Scroll on until the button is gone above.
    await page.mouse.wheel(0, 1500);
    await expect
      .poll(async () => (await page.getByRole('button', { name: label, exact: true }).boundingBox())?.y ?? -1)
      .toBeLessThan(0);
    await expectGone(menu);
  });

  it('edits a gateway with several subnets and shows them all', async () => {
    const name = uniqueName('lans');
    const node = await harness.seed<SeededNode>('POST', '/api/nodes', {
      name,
      isGateway: true,
      gatewayNetwork: '192.168.81.0/24',
    });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await (await openMenu(page, 'Node actions')).getByRole('menuitem', { name: 'Edit Node' }).click();
    const form = dialog(page, 'Edit Node');
    expect(await form.getByLabel('Gateway Network', { exact: true }).getAttribute('aria-required')).toBe('true');
    const further = form.getByLabel('Further Networks (Optional)', { exact: true });
    await further.fill('10.81.0.0/24, 192.168.81.128/25');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(form.getByText('192.168.81.128/25 overlaps 192.168.81.0/24, another network of this node'));
    await further.fill('10.81.0.0/24, 10.82.0.0/24');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectGone(form);
    await expectVisible(page.getByText('192.168.81.0/24, 10.81.0.0/24, 10.82.0.0/24', { exact: true }).first());
    const stored = await harness.seed<{ gatewayNetworks: string[] }>('GET', `/api/nodes/${node.id}`);
    expect(stored.gatewayNetworks).toEqual(['192.168.81.0/24', '10.81.0.0/24', '10.82.0.0/24']);
  });
});
