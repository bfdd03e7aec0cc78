import type { Theme } from '@postern/contract';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedAccessScreens, snapAccessScreens } from './access-screens.js';
import { axeViolations, type Violation } from './axe.js';
import { snap } from './browser.js';
import {
  dialog,
  expectGone,
  expectVisible,
  openMenu,
  startConsole,
  uniqueName,
  type ConsoleHarness,
} from './fixture.js';
import { ADMIN } from './server.js';

// Visits every screen and the main dialogs in light and dark theme at desktop and phone widths and stores a
// screenshot of each in artifacts/screenshots/<screen>-<viewport>-<theme>.png for review. Behaviour is asserted
// by the other files; this one only checks that each screen rendered before taking its picture, and runs axe-core on
// each screen and dialog as shot: no serious or critical WCAG 2.2 A/AA violation in any theme or size.

type Viewport = 'desktop' | 'phone';
const variants: { viewport: Viewport; theme: Theme }[] = [
  { viewport: 'desktop', theme: 'light' },
  { viewport: 'desktop', theme: 'dark' },
  { viewport: 'phone', theme: 'light' },
  { viewport: 'phone', theme: 'dark' },
];

interface Seeded {
  nodeId: number;
  nodeName: string;
  serviceId: number;
  serviceName: string;
  domain: string;
}

describe('screenshots', () => {
  let harness: ConsoleHarness;
  let seeded: Seeded;

  beforeAll(async () => {
    harness = await startConsole();
    const nodeName = 'home-lab';
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: nodeName, allowInternet: true });
    await harness.seed('POST', '/api/nodes', {
      name: 'office-gateway',
      isGateway: true,
      gatewayNetworks: ['192.168.10.0/24', '10.10.0.0/24'],
    });
    const domain = 'app.example.test';
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const serviceName = 'website';
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: serviceName,
      domain,
      backendPort: 8080,
    });
    await harness.seed('POST', `/api/services/${node.id}/tcp`, { name: 'mqtt-broker', backendPort: 1883 });
    await harness.seed('POST', `/api/nodes/${node.id}/pats`, { name: 'ci-pipeline' });
    seeded = { nodeId: node.id, nodeName, serviceId: service.id, serviceName, domain };
    await seedAccessScreens(harness, { nodeId: node.id, serviceId: service.id, domain });
  });

  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });

  afterAll(async () => {
    await harness.close();
  });

  it.each(variants)(
    'every screen at $viewport width in $theme theme',
    async ({ viewport, theme }) => {
      // Dialogs, menus and the mobile sidebar are fixed to the window: a shot of the window shows them as seen.
      const violations: Violation[] = [];
      const shot: Shot = async (page, screen) => {
        await snap(page, `${screen}-${viewport}-${theme}`, { fullPage: !/^(dialog|menu|sidebar)-/.test(screen) });
        violations.push(...(await axeViolations(page, screen)));
      };
      const page = await harness.openPage('/login', { viewport, theme, isSignedIn: false });
      await expectVisible(page.getByRole('button', { name: 'Sign in' }));
      await shot(page, 'login');
      await page.getByLabel('Username').fill(ADMIN.username);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();

      await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
      // In use: what needs attention (the seeded nodes never connected), the totals, the last 24 hours.
      await expectVisible(page.getByRole('region', { name: /^Needs attention/ }));
      await shot(page, 'home');
      await snapHomeWelcome(page, shot);
      if (viewport === 'phone') {
        await page.getByRole('button', { name: 'Open sidebar' }).click();
        await expectVisible(
          page.getByRole('complementary', { name: 'Sidebar' }).getByRole('link', { name: 'Domain Names' }),
        );
        await shot(page, 'sidebar-open');
        await page.keyboard.press('Escape');
      }

      await snapNodesList(page, shot);
      await snapNodeDetail(page, shot, seeded);
      await snapDomains(page, shot, seeded);
      await snapFindService(page, shot, seeded);
      await snapServices(page, shot, seeded);

      await page.goto('/audit');
      // The newest entry with its details open.
      await page
        .getByRole('button', { name: /^Details: / })
        .first()
        .click();
      await expectVisible(page.getByRole('term').filter({ hasText: 'Changes' }));
      await shot(page, 'audit');

      await page.goto(`/nodes/${seeded.nodeId}/http/${seeded.serviceId}/logs`);
      await expectVisible(page.getByRole('log'));
      await shot(page, 'log-viewer');

      await page.goto('/settings');
      await expectVisible(page.getByRole('heading', { name: 'Settings', level: 1 }));
      await expectVisible(page.getByText('Company SSO', { exact: true }));
      await shot(page, 'settings');
      await snapAccessScreens(page, shot, seeded);

      await page.goto('/no/such/page');
      await expectVisible(page.getByRole('link', { name: 'Back To Home' }));
      await shot(page, 'not-found');
      expect(violations).toEqual([]);
      // axe on some 20 states per variant: a busy machine needs more than the default minute.
    },
    240_000,
  );
});

type Shot = (page: Page, screen: string) => Promise<void>;

async function snapNodesList(page: Page, shot: Shot): Promise<void> {
  await page.goto('/nodes');
  await expectVisible(page.getByRole('link', { name: 'office-gateway' }));
  await shot(page, 'nodes-list');
  await page.getByRole('button', { name: 'Add Client' }).click();
  const form = dialog(page, 'New Node');
  await form.getByLabel('Name', { exact: true }).fill(uniqueName('raspberry'));
  await shot(page, 'dialog-node-form');
  await form.getByRole('button', { name: 'Save' }).click();
  const ready = dialog(page, 'Your Node is Ready');
  await expectVisible(ready.getByRole('textbox', { name: 'Connect command' }));
  await shot(page, 'dialog-node-ready');
  await ready.getByRole('button', { name: 'Got it!' }).click();
  await expectGone(ready);
}

async function snapNodeDetail(page: Page, shot: Shot, seeded: Seeded): Promise<void> {
  await page.goto(`/nodes/${seeded.nodeId}`);
  await expectVisible(page.getByText(seeded.serviceName, { exact: true }));
  await expectVisible(page.getByText('ci-pipeline', { exact: true }));
  await expectVisible(page.getByRole('textbox', { name: 'Connect command' }));
  await shot(page, 'node-detail');

  const section = (title: string) =>
    page.locator('section').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
  await section('HTTP Services').getByRole('button', { name: 'Add Service' }).first().click();
  const http = dialog(page, 'Expose HTTP Service');
  await http.getByLabel('Service Name').fill('dashboard');
  await http.getByLabel('Public HTTP Path').fill(`/${uniqueName('dash')}`);
  await shot(page, 'dialog-http-service-form');
  // The domain combobox with its suggestions open and one active (arrow key).
  await http.getByRole('combobox', { name: 'Public Domain' }).fill('app');
  await expectVisible(http.getByRole('option', { name: seeded.domain }));
  await page.keyboard.press('ArrowDown');
  await shot(page, 'dialog-http-service-form-suggestions');
  await page.keyboard.press('Escape');
  await http.getByRole('combobox', { name: 'Public Domain' }).fill('');
  await http.getByRole('button', { name: 'Save' }).click();
  const exposed = dialog(page, 'Your Service is Now Publicly Available');
  await expectVisible(exposed);
  await shot(page, 'dialog-service-exposed');
  await exposed.getByRole('button', { name: 'Got it!' }).click();
  await expectGone(exposed);

  await section('TCP Services').getByRole('button', { name: 'Add Service' }).first().click();
  const tcp = dialog(page, 'Expose TCP Service');
  await tcp.getByLabel('Service Name').fill('ssh');
  await shot(page, 'dialog-tcp-service-form');
  await tcp.getByRole('button', { name: 'Cancel' }).click();
  await expectGone(tcp);

  await section('Node Access Tokens').getByRole('button', { name: '+ Add Token' }).click();
  const tokenForm = dialog(page, 'Access Token Configuration');
  await tokenForm.getByLabel('Name', { exact: true }).fill(uniqueName('deploy'));
  await shot(page, 'dialog-token-form');
  await tokenForm.getByRole('button', { name: 'Save' }).click();
  const created = dialog(page, 'New Access Token Generated');
  await expectVisible(created);
  await shot(page, 'dialog-token-created');
  await created.getByRole('button', { name: 'Got it!' }).click();
  await expectGone(created);

  // A service table searched and sorted through the URL.
  await page.goto(`/nodes/${seeded.nodeId}?httpQ=web&httpSort=status&httpOrder=desc`);
  await expectVisible(page.getByRole('searchbox', { name: 'Search HTTP services by name, domain or path' }));
  await expectVisible(page.getByText(seeded.serviceName, { exact: true }));
  await shot(page, 'node-detail-search');
  await page.goto(`/nodes/${seeded.nodeId}`);
  await expectVisible(page.getByText(seeded.serviceName, { exact: true }));

  const menu = await openMenu(page, `Actions for ${seeded.serviceName}`);
  await shot(page, 'menu-service');
  await menu.getByRole('menuitem', { name: 'Disable Access' }).click();
  const confirmation = dialog(page, 'Disable Public Access');
  await expectVisible(confirmation);
  await shot(page, 'dialog-confirm');
  await confirmation.getByRole('button', { name: 'Cancel' }).click();
  await expectGone(confirmation);
}

async function snapDomains(page: Page, shot: Shot, seeded: Seeded): Promise<void> {
  await page.goto('/domains');
  await page.getByRole('button', { name: `Show services of ${seeded.domain}` }).click();
  await expectVisible(page.getByText(seeded.serviceName, { exact: true }));
  await shot(page, 'domains-list');
  await page.getByRole('button', { name: 'Add Domain' }).first().click();
  const form = dialog(page, 'Add Domain');
  await form.getByLabel('Domain', { exact: true }).fill('shop.example.test');
  await shot(page, 'dialog-domain-form');
  await form.getByRole('button', { name: 'Cancel' }).click();
  await expectGone(form);

  await page.goto('/domains?q=no-such-domain');
  await expectVisible(page.getByText('No domains match “no-such-domain”.'));
  await shot(page, 'domains-search-empty');
}

async function snapFindService(page: Page, shot: Shot, seeded: Seeded): Promise<void> {
  await page.goto('/');
  await expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' }));
  await page.keyboard.press('Control+k');
  const finder = dialog(page, 'Find a service, node or domain');
  await expectVisible(finder);
  await shot(page, 'dialog-find-service');
  await page.keyboard.type(seeded.domain);
  await expectVisible(finder.getByRole('link', { name: new RegExp(seeded.serviceName) }));
  await expectVisible(finder.getByRole('region', { name: 'Domains' }).getByRole('link', { name: seeded.domain }));
  await page.keyboard.press('ArrowDown');
  await shot(page, 'dialog-find-service-results');
  await page.keyboard.press('Escape');
  await expectGone(finder);
}

/** The home page of a gateway that holds nothing yet (its answer made up here: this world is seeded): the cards. */
async function snapHomeWelcome(page: Page, shot: Shot): Promise<void> {
  const empty = { total: 0, items: [] };
  await page.route('**/api/system/attention', (route) =>
    route.fulfill({
      json: {
        totals: { nodes: 0, domains: 0, httpServices: 0, tcpServices: 0 },
        offlineNodes: empty,
        disconnectedNodeIds: [],
        backendsDown: empty,
        certificates: empty,
        setAside: empty,
        drift: null,
      },
    }),
  );
  await page.reload();
  await expectVisible(page.getByRole('heading', { name: 'Create your first node' }));
  await shot(page, 'home-welcome');
  await page.unroute('**/api/system/attention');
}

/** Every service across nodes, a filter applied; a service's Info with its chart's cursor on a minute. */
async function snapServices(page: Page, shot: Shot, seeded: Seeded): Promise<void> {
  await page.goto('/services');
  await expectVisible(page.getByTestId('service-name').filter({ hasText: seeded.serviceName }));
  await shot(page, 'services');
  await openMenu(page, `Actions for ${seeded.serviceName}`);
  await page.getByRole('menuitem', { name: 'Info' }).click();
  const info = dialog(page, seeded.serviceName);
  const chart = info.getByRole('slider', { name: 'Requests per minute, last hour' });
  await expectVisible(chart);
  await chart.focus();
  await expectVisible(info.getByTestId('chart-tooltip'));
  await shot(page, 'dialog-service-info');
  await page.keyboard.press('Escape');
  await expectGone(info);
  await page.goto('/services?kind=tcp&status=disabled');
  await expectVisible(page.getByText('No services match these filters.'));
  await page.goto('/services?kind=tcp');
  await expectVisible(page.getByTestId('service-name').filter({ hasText: 'mqtt-broker' }));
  await shot(page, 'services-filtered');
}
