import type { NodeCreated } from '@postern/contract';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpGet } from '../harness/clients.js';
import { runIn } from '../harness/exec.js';
import { joinNode } from '../system/fixture.js';
import { snap } from './browser.js';
import {
  chooseMenuItem,
  expectPath,
  expectVisible,
  startConsole,
  uniqueName,
  UNTIL_SHOWN,
  type ConsoleHarness,
} from './fixture.js';
import { startRealGateway, type RealGateway } from './real-gateway.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The console against the real data plane (needs root for the gateway's namespaces): a request through nginx
// becomes an access-log line the log viewer shows live (the spec's "Screens and routes" Log viewer), and a node that
// brings its WireGuard tunnel up turns online in the open nodes list and node page (the spec: "Rows are replaced
// live").

const LINE_DEADLINE_MS = 20_000;
const STATUS_DEADLINE_MS = 15_000;

describe.skipIf(!canRun('netns', 'server-build'))('with the real data plane', () => {
  let gateway: RealGateway;
  let harness: ConsoleHarness;

  beforeAll(async () => {
    gateway = await startRealGateway();
    harness = await startConsole(gateway);
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

  /** Sends requests from the client until the viewer shows a line for `path`: the first ones may precede the stream. */
  async function waitForLine(page: Page, url: string): Promise<string> {
    const path = new URL(url).pathname;
    const line = page.getByRole('log').getByRole('listitem').filter({ hasText: path }).first();
    await expect
      .poll(
        async () => {
          await httpGet(gateway.clientNs, url, { timeoutMs: 1000, connectTo: gateway.publicIp });
          return line.count();
        },
        { timeout: LINE_DEADLINE_MS, interval: 250 },
      )
      .toBeGreaterThan(0);
    return (await line.textContent()) ?? '';
  }

  it('shows a line for a request to a service as it arrives, coloured by its level', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('log-node') });
    const prefix = `/${uniqueName('logs')}`;
    const name = uniqueName('logged');
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name,
      pathLocation: prefix,
      backendPort: 8080,
    });
    const page = await harness.openPage(`/nodes/${node.id}`, { theme: 'light' });
    await chooseMenuItem(page, `Actions for ${name}`, 'Logs Monitor');
    await expectPath(page, `/nodes/${node.id}/http/${service.id}/logs`);
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    await expectVisible(crumbs.getByRole('link', { name: 'HTTP Services' }));
    await expectVisible(crumbs.getByText('Real Time Logs'));
    await expectVisible(page.getByText('Waiting for log lines…'));

    // The node never connected, so the upstream fails (or the client gives up first): an [ERROR] line, in red.
    const text = await waitForLine(page, `https://${gateway.publicIp}:8443${prefix}/hello`);
    expect(text).toMatch(/^\[ERROR\] \S+ \S+ "GET [^"]*\/hello HTTP\/[\d.]+" \d{3} /);
    const item = page
      .getByRole('log')
      .getByRole('listitem')
      .filter({ hasText: `${prefix}/hello` })
      .first();
    expect(await item.getAttribute('class')).toContain('text-red-400');
    await snap(page, 'log-viewer-lines-desktop-light');
  });

  it("shows a domain's lines in the domain log viewer", async () => {
    const domain = `${uniqueName('logs')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('domain-log-node') });
    await harness.seed('POST', `/api/services/${node.id}/http`, {
      name: uniqueName('site'),
      domain,
      backendPort: 8080,
    });
    const page = await harness.openPage(`/domains/${domain}/logs`, { theme: 'dark', viewport: 'phone' });
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    await expectVisible(crumbs.getByRole('link', { name: 'Domains' }));
    await expectVisible(crumbs.getByText(domain, { exact: true }));

    const text = await waitForLine(page, `https://${domain}/from-domain-viewer`);
    expect(text).toContain(`host=${domain}`);
    await snap(page, 'log-viewer-lines-phone-dark');
  });

  it('keeps showing lines after the gateway restarts: the viewer reconnects by itself', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('restart-node') });
    const prefix = `/${uniqueName('again')}`;
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: uniqueName('again'),
      pathLocation: prefix,
      backendPort: 8080,
    });
    const page = await harness.openPage(`/nodes/${node.id}/http/${service.id}/logs`);
    await waitForLine(page, `https://${gateway.publicIp}:8443${prefix}/before`);

    await gateway.restart();
    const text = await waitForLine(page, `https://${gateway.publicIp}:8443${prefix}/after`);
    expect(text).toContain(`${prefix}/after`);
    // Lines from before the restart stay on screen.
    await expectVisible(page.getByRole('log').getByText(`${prefix}/before`).first());
  });

  it('shows a node going online live when its tunnel comes up', async () => {
    const node = await harness.seed<NodeCreated>('POST', '/api/nodes', { name: uniqueName('tunnel') });
    const list = await harness.openPage('/nodes');
    const row = list.getByRole('row').filter({ has: list.getByRole('link', { name: node.name, exact: true }) });
    await expectVisible(row.getByRole('img', { name: 'offline' }));
    const detail = await harness.openPage(`/nodes/${node.id}`);
    const clientIp = detail.getByRole('row', { name: /^Client IP/ });
    await expectVisible(clientIp.getByText('-', { exact: true }));

    const joined = await joinNode(gateway.system, node, 'node1', 11);
    // The gateway polls WireGuard every 2 s; the streams push the change without a reload.
    await row.getByRole('img', { name: 'online' }).waitFor({ timeout: STATUS_DEADLINE_MS });
    // Phones show the handshake under the name too: the one shown.
    await expectVisible(row.getByText(/seconds? ago|just now|minute/).filter({ visible: true }));
    await detail.getByRole('img', { name: 'online' }).waitFor({ timeout: STATUS_DEADLINE_MS });
    await expectVisible(clientIp.getByText(/^\d+\.\d+\.\d+\.\d+(:\d+)?$/));
    expect(joined.tunnelIp).toBe(node.address);
  });

  it('keeps the newest 1000 lines', async () => {
    const node = await harness.seed<NodeCreated>('POST', '/api/nodes', { name: uniqueName('busy') });
    const joined = await joinNode(gateway.system, node, 'busy', 12);
    await joined.serve('http', 8080);
    const prefix = `/${uniqueName('cap')}`;
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: uniqueName('cap'),
      pathLocation: prefix,
      backendPort: 8080,
    });
    const page = await harness.openPage(`/nodes/${node.id}/http/${service.id}/logs`);
    await waitForLine(page, `https://${gateway.publicIp}:8443${prefix}/warm-up`);

    // 1005 requests in one curl run (URL globbing), answered by the node's backend.
    await runIn(
      gateway.clientNs,
      'curl',
      ['-sk', '--max-time', '60', '-o', '/dev/null', `https://${gateway.publicIp}:8443${prefix}/n[1-1005]`],
      { timeoutMs: 70_000 },
    );
    const lines = page.getByRole('log').getByRole('listitem');
    // Matched with the protocol after the path: `/n5 HTTP` must not find `/n50 HTTP`.
    await lines.filter({ hasText: `${prefix}/n1005 HTTP` }).waitFor({ timeout: LINE_DEADLINE_MS });
    expect(await lines.count()).toBe(1000);
    expect(await lines.filter({ hasText: `${prefix}/n5 HTTP` }).count()).toBe(0);
    expect(await lines.first().textContent()).toContain(`${prefix}/n6 HTTP`);
    expect(await lines.last().getAttribute('class')).toContain('text-blue-400');
    // The viewer follows the stream: scrolled to the newest line.
    await expect
      .poll(
        () => page.getByRole('log').evaluate((log) => log.scrollHeight - log.scrollTop - log.clientHeight),
        UNTIL_SHOWN,
      )
      .toBeLessThan(30);
  });
});
