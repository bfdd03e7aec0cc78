import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialog, expectVisible, startConsole, uniqueName, UNTIL_SHOWN, type ConsoleHarness } from './fixture.js';

// Finding things at scale and by keyboard, beyond the lists: search on the domains list and every
// service table (kept in the URL), the global "Find" dialog (Ctrl+K), the domain combobox, the date picker's focus,
// the closed phone sidebar, focus on a failed submit, status in words. Keyboard only wherever a user would be.

const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return el
      ? `${el.tagName.toLowerCase()}:${el.getAttribute('name') ?? el.getAttribute('aria-label') ?? el.textContent.trim()}`
      : '';
  });
const param = (page: Page, key: string) => new URL(page.url()).searchParams.get(key);

describe('finding services and domains, keyboard leftovers', () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  });
  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('searches and pages the domains list on the server, keeps the view in the URL, and Back returns to it', async () => {
    const prefix = uniqueName('dom');
    for (let i = 0; i < 12; i++) {
      await harness.seed('POST', '/api/domains', {
        domain: `${prefix}-${String(i).padStart(2, '0')}.example.test`,
        skipValidation: true,
      });
    }
    const page = await harness.openPage('/domains');
    await page.getByRole('searchbox', { name: 'Search domains by name' }).fill(prefix);
    await expect.poll(() => param(page, 'q'), UNTIL_SHOWN).toBe(prefix);
    await expectVisible(page.getByText('Showing 1 to 10 of 12 results'));
    await page.getByRole('button', { name: 'Next' }).click();
    await expectVisible(page.getByText('Showing 11 to 12 of 12 results'));
    expect(param(page, 'page')).toBe('2');
    await page.getByLabel('Rows per page').selectOption('25');
    await expectVisible(page.getByText(`${prefix}-11.example.test`));
    expect(param(page, 'limit')).toBe('25');
    await page.goBack();
    await expectVisible(page.getByText('Showing 11 to 12 of 12 results'));
    expect(await page.getByRole('searchbox', { name: 'Search domains by name' }).inputValue()).toBe(prefix);

    // Expanded rows: their tables are h2s under the page's h1 (no level skipped).
    await page.getByRole('button', { name: `Show services of ${prefix}-10.example.test` }).click();
    await expectVisible(
      page
        .getByRole('heading', { level: 2, name: 'HTTP Services' })
        .or(page.getByText('No services use this domain yet')),
    );
    expect(await page.locator('main h3, main h4').count()).toBe(0);

    await page.getByRole('searchbox', { name: 'Search domains by name' }).fill('no-such-domain');
    await expectVisible(page.getByRole('status').filter({ hasText: 'No domains match “no-such-domain”.' }));
  });

  it("keeps an expanded domain row's service tables in the URL: Back and a shared link return to the view", async () => {
    const domain = `${uniqueName('rows')}.example.test`;
    const created = await harness.seed<{ id: number }>('POST', '/api/domains', { domain, skipValidation: true });
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('rows') });
    const names = ['delta', 'alpha', 'charlie', 'bravo', 'echo', 'foxtrot', 'golf'];
    for (const name of names) {
      await harness.seed('POST', `/api/services/${node.id}/http`, {
        name,
        domain,
        pathLocation: `/${name}`,
        backendPort: 80,
      });
    }
    await harness.seed('POST', `/api/services/${node.id}/tcp`, { name: 'mqtt', domain, backendPort: 1883 });
    const page = await harness.openPage(`/domains?q=${domain}`);
    await page.getByRole('button', { name: `Show services of ${domain}` }).click();
    await expect.poll(() => param(page, 'open'), UNTIL_SHOWN).toBe(String(created.id));
    // The row's own sections, not the page's card around both.
    const table = (on: Page, label: string) =>
      on.locator('section', {
        has: on.getByRole('heading', { level: 2, name: `${label} Services` }),
        hasNot: on.getByRole('heading', { level: 2, name: `${label === 'HTTP' ? 'TCP' : 'HTTP'} Services` }),
      });
    const http = table(page, 'HTTP');
    const tcp = table(page, 'TCP');
    const rowNames = () => http.locator('tbody tr td:first-child > span:first-child').allTextContents();
    await expect.poll(rowNames, UNTIL_SHOWN).toHaveLength(5);

    const key = (name: string) => `d${String(created.id)}.${name}`;
    await http.getByRole('button', { name: 'Name' }).click();
    await http.getByRole('button', { name: 'Name' }).click();
    await expect.poll(() => param(page, key('httpOrder')), UNTIL_SHOWN).toBe('desc');
    await http.getByRole('button', { name: 'Next' }).click();
    await expectVisible(http.getByText('Showing 6 to 7 of 7 results'));
    await expect.poll(rowNames, UNTIL_SHOWN).toEqual(['bravo', 'alpha']);
    expect(param(page, key('httpPage'))).toBe('2');
    expect(param(page, key('httpSort'))).toBe('name');
    await tcp.getByRole('searchbox', { name: 'Search TCP services by name, domain or port' }).fill('MQ');
    await expect.poll(() => param(page, key('tcpQ')), UNTIL_SHOWN).toBe('MQ');
    const view = new URL(page.url());

    // Away to the service's node and Back: the row is open and both tables show what they showed.
    const menu = http.getByRole('button', { name: 'Actions for alpha' });
    await menu.click();
    await page.getByRole('menuitem', { name: 'Go to node' }).click();
    await expectVisible(page.getByRole('heading', { level: 1, name: /^rows-/ }));
    await page.goBack();
    await expectVisible(http.getByText('Showing 6 to 7 of 7 results'));
    await expect.poll(rowNames, UNTIL_SHOWN).toEqual(['bravo', 'alpha']);
    expect(await tcp.getByRole('searchbox', { name: 'Search TCP services by name, domain or port' }).inputValue()).toBe(
      'MQ',
    );
    expect(await http.getByRole('columnheader', { name: /Name/ }).getAttribute('aria-sort')).toBe('descending');

    // A copied link opens the same view in a new browser.
    const shared = await harness.openPage(view.pathname + view.search);
    const sharedHttp = table(shared, 'HTTP');
    await expectVisible(sharedHttp.getByText('Showing 6 to 7 of 7 results'));
    expect(await sharedHttp.locator('tbody tr td:first-child > span:first-child').allTextContents()).toEqual([
      'bravo',
      'alpha',
    ]);
    expect(await shared.getByRole('button', { name: `Hide services of ${domain}` }).getAttribute('aria-expanded')).toBe(
      'true',
    );

    // Closing the row drops its tables' views from the URL.
    await shared.getByRole('button', { name: `Hide services of ${domain}` }).click();
    await expect.poll(() => [...new URL(shared.url()).searchParams.keys()], UNTIL_SHOWN).toEqual(['q']);
  });

  it("searches, sorts and pages a node's service tables, each kept in the URL, with status in words", async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('svc') });
    const names = ['delta', 'alpha', 'charlie', 'bravo', 'echo', 'foxtrot', 'golf'];
    const ids: Record<string, number> = {};
    for (const name of names) {
      ids[name] = (
        await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
          name,
          pathLocation: `/${uniqueName(name)}`,
          backendPort: 80,
        })
      ).id;
    }
    await harness.seed('PATCH', `/api/services/${node.id}/http/${ids.alpha}/disable`);
    await harness.seed('POST', `/api/services/${node.id}/tcp`, { name: 'mqtt', backendPort: 1883 });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const http = page
      .getByRole('region', { name: 'HTTP Services' })
      .or(page.locator('section', { has: page.getByRole('heading', { name: 'HTTP Services' }) }));
    const rowNames = () => http.locator('tbody tr td:first-child > span:first-child').allTextContents();
    await expect.poll(rowNames, UNTIL_SHOWN).toEqual(['delta', 'alpha', 'charlie', 'bravo', 'echo']);
    // Exposure in words, not only by colour.
    await expectVisible(
      http.locator('tbody tr', { hasText: 'alpha' }).getByText('Not public', { exact: true }).filter({ visible: true }),
    );
    await expectVisible(
      http.locator('tbody tr', { hasText: 'delta' }).getByText('Public', { exact: true }).filter({ visible: true }),
    );

    await http.getByRole('button', { name: 'Name' }).click();
    await expect.poll(rowNames, UNTIL_SHOWN).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(param(page, 'httpSort')).toBe('name');
    await http.getByRole('button', { name: 'Status' }).click();
    await http.getByRole('button', { name: 'Status' }).click();
    await expect.poll(() => param(page, 'httpOrder'), UNTIL_SHOWN).toBe('desc');
    await expect.poll(async () => (await rowNames())[0], UNTIL_SHOWN).toBe('alpha');

    await http.getByRole('button', { name: 'Next' }).click();
    await expectVisible(http.getByText('Showing 6 to 7 of 7 results'));
    expect(param(page, 'httpPage')).toBe('2');
    await http.getByLabel('Rows per page').selectOption('10');
    await expect.poll(async () => (await rowNames()).length, UNTIL_SHOWN).toBe(7);
    expect(param(page, 'httpLimit')).toBe('10');
    await page.goBack();
    await expectVisible(http.getByText('Showing 6 to 7 of 7 results'));

    await http.getByRole('searchbox', { name: 'Search HTTP services by name, domain or path' }).fill('CHAR');
    await expect.poll(rowNames, UNTIL_SHOWN).toEqual(['charlie']);
    expect(param(page, 'httpQ')).toBe('CHAR');
    // The TCP table keeps its own view.
    await expectVisible(page.getByText('mqtt', { exact: true }));
    const tcpSearch = page.getByRole('searchbox', { name: 'Search TCP services by name, domain or port' });
    await tcpSearch.fill('nothing-here');
    await expectVisible(page.getByRole('status').filter({ hasText: 'No TCP services match “nothing-here”.' }));
    await expect.poll(() => param(page, 'tcpQ'), UNTIL_SHOWN).toBe('nothing-here');
    expect(param(page, 'httpQ')).toBe('CHAR');
  });

  it('finds a service from anywhere with Ctrl+K, by name or address, and opens it by keyboard', async () => {
    const nodeName = uniqueName('far');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: nodeName });
    const service = uniqueName('needle');
    const domain = `${service}.example.test`;
    await harness.seed('POST', `/api/services/${node.id}/http`, {
      name: service,
      domain,
      pathLocation: '/hay',
      backendPort: 80,
    });
    const page = await harness.openPage('/');
    await expectVisible(page.getByRole('heading', { level: 1 }));
    await page.keyboard.press('Control+k');
    const finder = dialog(page, 'Find a service, node or domain');
    await expectVisible(finder);
    await expect.poll(() => focused(page), UNTIL_SHOWN).toMatch(/^input:/);
    await page.keyboard.type(`${domain}/ha`);
    await expectVisible(
      finder.getByRole('status').filter({ hasText: `1 service, 0 nodes and 0 domains match “${domain}/ha”.` }),
    );
    const result = finder.getByRole('link', { name: new RegExp(service) });
    await expectVisible(result);
    expect(await result.textContent()).toContain(`on node ${nodeName}`);
    await page.keyboard.press('ArrowDown');
    expect(await result.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await expectVisible(page.getByRole('heading', { level: 1, name: nodeName }));
    expect(param(page, 'httpQ')).toBe(service);
    await expectVisible(page.locator('tbody tr', { hasText: service }));
    // The service itself opens: its Info, over its node's table searched for it.
    const info = dialog(page, service);
    await expectVisible(info);
    await info.getByRole('button', { name: 'Got it!' }).click();
    await expect.poll(() => page.getByRole('dialog').count(), UNTIL_SHOWN).toBe(0);

    // The header button opens it too; nothing found says so; Escape closes it and focus returns to the button.
    const trigger = page.getByRole('button', { name: 'Find', exact: true });
    await trigger.click();
    await page.keyboard.type(uniqueName('nothing'));
    await expectVisible(finder.getByRole('status').filter({ hasText: /^Nothing matches/ }));
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count(), UNTIL_SHOWN).toBe(0);
    expect(await trigger.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('picks a domain suggestion with the keyboard, and Enter does not submit the service form', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('combo') });
    const stem = uniqueName('combo');
    await harness.seed('POST', '/api/domains', { domain: `${stem}-a.example.test`, skipValidation: true });
    await harness.seed('POST', '/api/domains', { domain: `${stem}-b.example.test`, skipValidation: true });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await page
      .locator('section', { has: page.getByRole('heading', { name: 'HTTP Services' }) })
      .getByRole('button', { name: 'Add Service' })
      .first()
      .click();
    const form = dialog(page, 'Expose HTTP Service');
    await expectVisible(form);
    await page.keyboard.type('web');
    await page.keyboard.press('Tab');
    const combo = form.getByRole('combobox', { name: 'Public Domain' });
    expect(await combo.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type(stem);
    await expectVisible(form.getByRole('option', { name: `${stem}-b.example.test` }));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const active = await combo.getAttribute('aria-activedescendant');
    expect(await page.locator(`[id="${active}"]`).textContent()).toBe(`${stem}-b.example.test`);
    await page.keyboard.press('Enter');
    expect(await combo.inputValue()).toBe(`${stem}-b.example.test`);
    await expect.poll(() => combo.getAttribute('aria-expanded'), UNTIL_SHOWN).toBe('false');
    // Escape with the list open closes the list only; the dialog stays.
    await page.keyboard.press('ArrowDown');
    await expectVisible(form.getByRole('listbox'));
    await page.keyboard.press('Escape');
    await expect.poll(() => form.getByRole('listbox').count(), UNTIL_SHOWN).toBe(0);
    await expectVisible(form);
    expect(await page.getByText('Service exposed successfully!').count()).toBe(0);
  });

  it('focuses the first invalid field on a failed submit of the node, service and token forms', async () => {
    const page = await harness.openPage('/nodes');
    await page.getByRole('button', { name: 'Add Client' }).click();
    const nodeForm = page.getByRole('dialog');
    await expectVisible(nodeForm);
    await page.getByLabel('This node is a gateway').check();
    await nodeForm.getByLabel(/^Name/).fill('gw');
    await nodeForm.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => focused(page), UNTIL_SHOWN).toBe('input:gatewayNetwork');
    await page.keyboard.press('Escape');

    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('invalid') });
    const detail = await harness.openPage(`/nodes/${node.id}`);
    await detail
      .locator('section', { has: detail.getByRole('heading', { name: 'TCP Services' }) })
      .getByRole('button', { name: 'Add Service' })
      .first()
      .click();
    const tcpForm = dialog(detail, 'Expose TCP Service');
    await expectVisible(tcpForm);
    await tcpForm.getByLabel(/^Backend Port/).fill('');
    await tcpForm.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => focused(detail), UNTIL_SHOWN).toBe('input:name');
    await tcpForm.getByLabel(/^Service Name/).fill('x');
    await tcpForm.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => focused(detail), UNTIL_SHOWN).toBe('input:backendPort');
    await detail.keyboard.press('Escape');

    await detail.getByRole('button', { name: '+ Add Token' }).click();
    const tokenForm = dialog(detail, 'Access Token Configuration');
    await tokenForm.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => focused(detail), UNTIL_SHOWN).toBe('input:name');
  });

  it('hands focus back to the date field after a date is picked, Escape or Clear', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('date') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await page.getByRole('button', { name: '+ Add Token' }).click();
    const form = dialog(page, 'Access Token Configuration');
    const trigger = form.locator('button[name="expireAt"]');
    await trigger.focus();
    await page.keyboard.press('Enter');
    const calendar = form.getByRole('dialog', { name: 'Choose a date' });
    await expectVisible(calendar);
    await calendar.getByRole('button', { name: 'Next month' }).focus();
    await page.keyboard.press('Enter');
    await calendar.getByRole('button', { name: '15', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => calendar.count(), UNTIL_SHOWN).toBe(0);
    expect(await trigger.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await expectVisible(calendar);
    await page.keyboard.press('Escape');
    await expect.poll(() => calendar.count(), UNTIL_SHOWN).toBe(0);
    expect(await trigger.evaluate((el) => el === document.activeElement)).toBe(true);
    await expectVisible(form);
    await form.getByRole('button', { name: 'Clear' }).click();
    expect(await trigger.evaluate((el) => el === document.activeElement)).toBe(true);
  });

  it('keeps the closed phone sidebar out of the Tab order; the opened one takes focus and Escape returns it', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: uniqueName('phone') });
    const page = await harness.openPage('/nodes', { viewport: 'phone' });
    await expectVisible(page.getByRole('heading', { level: 1, name: 'Client / Nodes' }));
    const sidebarLinks = page.locator('#sidebar a');
    const reachedSidebar: boolean[] = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      reachedSidebar.push(await page.evaluate(() => Boolean(document.activeElement?.closest('#sidebar'))));
    }
    expect(reachedSidebar).not.toContain(true);
    expect(await sidebarLinks.first().evaluate((el) => el.closest('[inert]') !== null)).toBe(true);
    const open = page.getByRole('button', { name: 'Open sidebar' });
    await open.click();
    await expect
      .poll(() => page.evaluate(() => Boolean(document.activeElement?.closest('#sidebar'))), UNTIL_SHOWN)
      .toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => open.evaluate((el) => el === document.activeElement), UNTIL_SHOWN).toBe(true);
    // The node's status reads as a word next to its dot.
    await page.getByRole('searchbox', { name: 'Search nodes by name or address' }).fill(node.name);
    await expectVisible(page.locator('tbody tr', { hasText: node.name }).getByText('Offline', { exact: true }));
  });
});
