import { operations, type ServiceFigures, type Theme } from '@postern/contract';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../harness/backends.js';
import { httpGet } from '../harness/clients.js';
import type { ManagedProcess } from '../harness/processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, type ConnectedNode } from '../system/fixture.js';
import { axeViolations, type Violation } from './axe.js';
import { snap } from './browser.js';
import { chooseMenuItem, dialog, expectVisible, startConsole, type ConsoleHarness } from './fixture.js';
import { startRealGateway, type RealGateway } from './real-gateway.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// What the gateway observes, as the console shows it (docs/api.md "Observability"), with real figures: requests sent
// through the real nginx to a real backend on a node joined over WireGuard, and health checked by the gateway through
// the tunnel. A service row shows its last hour in words and a sparkline and its backend's health in words (not by
// colour alone); the info view charts it; the home page shows the totals and the drift check; a backend stopped on the
// node turns its badge and the home page's counts without a reload, pushed by /api/observe/stream (the queries poll
// only once a minute, far beyond the deadlines here). Each screen is shot light and dark, desktop and phone, through
// axe.

const SITE_PORT = 8080;
/** The backend this file stops: a process of its own, so the site keeps serving. */
const CHECKED_PORT = 8081;
const SITE_DOMAIN = 'site.observe.browser.test';
const CHECKED_DOMAIN = 'checked.observe.browser.test';
/** The shortest health interval the API accepts. */
const HEALTH_INTERVAL_SECONDS = 5;
const APPLY_DEADLINE_MS = 20_000;
/** From the API's change to the badge: a push, not the once-a-minute poll. */
const PUSHED_WITHIN_MS = 5_000;

type Viewport = 'desktop' | 'phone';
const variants: { viewport: Viewport; theme: Theme }[] = [
  { viewport: 'desktop', theme: 'light' },
  { viewport: 'desktop', theme: 'dark' },
  { viewport: 'phone', theme: 'light' },
  { viewport: 'phone', theme: 'dark' },
];

describe.skipIf(!canRun('netns', 'server-build'))('the figures of the real gateway in the console', () => {
  let gateway: RealGateway;
  let harness: ConsoleHarness;
  let node: ConnectedNode;
  let checked: ManagedProcess;
  let siteId = 0;
  let checkedId = 0;
  /** Requests the site served, the first one included (it found the service served); one of them a 500. */
  const SITE_REQUESTS = 6;

  const get = (url: string) => httpGet(gateway.clientNs, url, { connectTo: gateway.publicIp });
  const figures = async (): Promise<ServiceFigures[]> =>
    (await gateway.system.api.call(operations.serviceFigures, { query: { nodeId: node.node.id } })).data;
  const figuresOf = async (id: number) => (await figures()).find((row) => row.type === 'http' && row.id === id);
  const rowOf = (page: Page, name: string): Locator =>
    page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });
  const badgeOf = (page: Page, name: string): Locator => rowOf(page, name).locator('[data-health]');

  beforeAll(async () => {
    gateway = await startRealGateway();
    harness = await startConsole(gateway);
    node = await connectNode(gateway.system, 'node1', 11);
    await node.serve('http', SITE_PORT);
    checked = await startBackend(gateway.system.lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
    const { api } = gateway.system;
    const site = await api.createHttpService(node.node.id, {
      name: 'website',
      domain: SITE_DOMAIN,
      backendHost: node.tunnelIp,
      backendPort: SITE_PORT,
    });
    const watched = await api.createHttpService(node.node.id, {
      name: 'checked-api',
      domain: CHECKED_DOMAIN,
      backendHost: node.tunnelIp,
      backendPort: CHECKED_PORT,
    });
    siteId = site.id;
    checkedId = watched.id;
    for (const id of [siteId, checkedId]) {
      await api.call(operations.updateHealthCheck, {
        params: { nodeId: node.node.id, type: 'http', id },
        body: { intervalSeconds: HEALTH_INTERVAL_SECONDS, timeoutSeconds: 2 },
      });
    }
    await waitFor(async () => (await get(`https://${SITE_DOMAIN}/ready`)).status === 200, {
      timeoutMs: APPLY_DEADLINE_MS,
      what: 'the site to be served',
    });
    for (let i = 0; i < SITE_REQUESTS - 2; i++)
      expect((await get(`https://${SITE_DOMAIN}/page-${i}`)).status).toBe(200);
    expect((await get(`https://${SITE_DOMAIN}/status/500`)).status).toBe(500);
    await waitFor(
      async () => {
        const [site_, checked_] = [await figuresOf(siteId), await figuresOf(checkedId)];
        return site_?.requests === SITE_REQUESTS && site_.health?.state === 'up' && checked_?.health?.state === 'up';
      },
      { timeoutMs: APPLY_DEADLINE_MS, what: `${SITE_REQUESTS} requests counted and both backends up` },
    );
  });

  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await harness?.close();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    expect(gateway?.leftovers() ?? []).toEqual([]);
  });

  it.each(variants)(
    'shows rows, the info chart and the home totals at $viewport width in $theme theme',
    async ({ viewport, theme }) => {
      const violations: Violation[] = [];
      const shot = async (page: Page, screen: string, fullPage = true) => {
        await snap(page, `${screen}-${viewport}-${theme}`, { fullPage });
        violations.push(...(await axeViolations(page, screen)));
      };

      const detail = await harness.openPage(`/nodes/${node.node.id}`, { viewport, theme });
      const site = rowOf(detail, 'website');
      const siteFigures = site.getByTestId('service-figures');
      await expect
        .poll(() => siteFigures.textContent(), { timeout: 10_000 })
        .toMatch(new RegExp(`^Up${SITE_REQUESTS} req/h · 1 err · \\d`));
      await expectVisible(site.getByRole('img', { name: `${SITE_REQUESTS} req in the last hour, 1 with errors` }));
      expect(await badgeOf(detail, 'website').textContent()).toBe('Up');
      expect(await badgeOf(detail, 'checked-api').textContent()).toBe('Up');
      await expectVisible(rowOf(detail, 'checked-api').getByText('0 req/h', { exact: false }));
      await shot(detail, 'node-detail-figures');

      await chooseMenuItem(detail, 'Actions for website', 'Info');
      const info = dialog(detail, 'website');
      const traffic = info.getByRole('region', { name: 'Traffic, last hour' });
      await expectVisible(traffic.getByRole('slider', { name: 'Requests per minute, last hour' }));
      await expectVisible(traffic.getByText('Requests', { exact: true }));
      await expectVisible(traffic.getByText(String(SITE_REQUESTS), { exact: true }));
      await expectVisible(traffic.getByText(`${SITE_REQUESTS - 1} / 0 / 0`, { exact: true }));
      // The one 5xx is a figure of its own.
      await expectVisible(traffic.getByText('5xx errors', { exact: true }));
      await shot(detail, 'dialog-service-traffic', false);

      const home = await harness.openPage('/', { viewport, theme });
      const status = home.getByRole('region', { name: 'System status' });
      await expect
        .poll(() => status.getByTestId('total-requests').textContent(), { timeout: 10_000 })
        .toBe(String(SITE_REQUESTS));
      await expect
        .poll(() => status.getByTestId('health-counts').textContent(), { timeout: 10_000 })
        .toBe('2 up · 0 down');
      await expectVisible(
        status.getByRole('slider', { name: 'Requests and connections per 10 minutes, last 24 hours' }),
      );
      await expect
        .poll(() => status.getByTestId('drift-status').textContent(), { timeout: APPLY_DEADLINE_MS })
        .toMatch(/^Drift check .*: nginx and WireGuard serve what the database says\.$/);
      await shot(home, 'home-figures');

      expect(violations).toEqual([]);
    },
  );

  it('turns a stopped backend Down on the node page and in the home counts without a reload, and Up again', async () => {
    const detail = await harness.openPage(`/nodes/${node.node.id}`);
    const home = await harness.openPage('/');
    const counts = home.getByRole('region', { name: 'System status' }).getByTestId('health-counts');
    await expect.poll(() => badgeOf(detail, 'checked-api').textContent(), { timeout: 10_000 }).toBe('Up');
    await expect.poll(() => counts.textContent(), { timeout: 10_000 }).toBe('2 up · 0 down');

    await checked.stop();
    await waitFor(async () => (await figuresOf(checkedId))?.health?.state === 'down', {
      timeoutMs: 2 * HEALTH_INTERVAL_SECONDS * 1000 + 2000,
      what: 'the gateway to see the stopped backend down',
    });
    await expect
      .poll(() => badgeOf(detail, 'checked-api').textContent(), { timeout: PUSHED_WITHIN_MS, interval: 100 })
      .toBe('Down');
    await expect.poll(() => counts.textContent(), { timeout: PUSHED_WITHIN_MS, interval: 100 }).toBe('1 up · 1 down');
    // Why, in words, where the badge is.
    expect(await badgeOf(detail, 'checked-api').getAttribute('title')).toContain('connection refused');
    expect(await badgeOf(detail, 'website').textContent()).toBe('Up');
    await snap(detail, 'node-detail-backend-down-desktop-light');
    expect(await axeViolations(detail, 'node-detail-backend-down')).toEqual([]);

    checked = await startBackend(gateway.system.lab, node.ns, 'http', node.tunnelIp, CHECKED_PORT, 'node1');
    await waitFor(async () => (await figuresOf(checkedId))?.health?.state === 'up', {
      timeoutMs: 2 * HEALTH_INTERVAL_SECONDS * 1000 + 2000,
      what: 'the gateway to see the restarted backend up',
    });
    await expect
      .poll(() => badgeOf(detail, 'checked-api').textContent(), { timeout: PUSHED_WITHIN_MS, interval: 100 })
      .toBe('Up');
    await expect.poll(() => counts.textContent(), { timeout: PUSHED_WITHIN_MS, interval: 100 }).toBe('2 up · 0 down');
  });
});
