import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import {
  acceptConfirmation,
  chooseMenuItem,
  dialog,
  expectGone,
  expectPath,
  expectVisible,
  openMenu,
  useConsoleHarness,
  toast,
  uniqueName,
} from './fixture.js';

// Nodes: create one and see its token once, filter by type, page through the list, connect/disconnect/delete
// with confirmations, download the config (the spec's "Screens and routes", "States and transitions", "Error catalogue"
// and "Business constants and limits").

const nodeLink = (page: Page, name: string) => page.getByRole('link', { name, exact: true });

describe('nodes list', () => {
  const harness = useConsoleHarness();

  it("creates a node and shows 'Your Node is Ready' with its token once", async () => {
    const name = uniqueName('laptop');
    const page = await harness.openPage('/nodes');
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByRole('button', { name: 'Save' }).click();

    const ready = dialog(page, 'Your Node is Ready');
    await expectVisible(ready);
    const token = await ready.getByRole('textbox', { name: 'Token', exact: true }).inputValue();
    expect(token).toMatch(/^pstn_/);
    // The gateway's public address (POSTERN_PUBLIC_HOST over HTTPS), not the 127.0.0.1 address this browser uses.
    // No pin: with the data plane off the gateway serves no certificate yet.
    // The token is on screen once (its field): the command shows it masked.
    await expect
      .poll(() => ready.getByRole('textbox', { name: 'Connect command' }).inputValue())
      .toBe(`postern connect --url https://gateway.test --token ${token.slice(0, 5)}••••••••`);
    await ready.getByRole('button', { name: 'Got it!' }).click();
    await expectGone(ready);
    await expectVisible(nodeLink(page, name));

    // Shown once: neither the list nor the node's own page carries it afterwards.
    expect(await page.content()).not.toContain(token);
    await nodeLink(page, name).click();
    await expectVisible(page.getByRole('heading', { name, exact: true }));
    expect(await page.content()).not.toContain(token);
  });

  it("'Your Node is Ready' shows the one-line install as printed lines and the WireGuard config as a QR code", async () => {
    const page = await harness.openPage('/nodes');
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    await form.getByLabel('Name', { exact: true }).fill(uniqueName('pi'));
    await form.getByRole('button', { name: 'Save' }).click();
    const ready = dialog(page, 'Your Node is Ready');
    const token = await ready.getByRole('textbox', { name: 'Token', exact: true }).inputValue();
    const install = ready.getByRole('textbox', { name: 'Install command' });
    await expect
      .poll(() => install.inputValue())
      .toBe(
        [
          '{ curl -fsS https://gateway.test/install.sh',
          `  echo "postern_install --url 'https://gateway.test' --token '${token.slice(0, 5)}••••••••'"`,
          '} | sudo sh',
        ].join('\n'),
      );
    expect(await axeViolations(page, 'node ready: CLI')).toEqual([]);
    await ready.getByRole('button', { name: 'WireGuard' }).click();
    const qr = ready.getByRole('img', { name: "QR code of this node's WireGuard configuration" });
    await expectVisible(qr);
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;charset=utf-8,/);
    expect(await axeViolations(page, 'node ready: WireGuard')).toEqual([]);
    await ready.getByRole('button', { name: 'Docker' }).click();
    // One option a line; no pin, as the data plane is off here and serves no certificate.
    expect((await ready.getByRole('textbox', { name: 'Docker command' }).inputValue()).split('\n')).toEqual([
      'docker run -d --name postern-node --restart unless-stopped \\',
      '  --cap-add NET_ADMIN --device /dev/net/tun \\',
      '  -e POSTERN_URL=https://gateway.test \\',
      `  -e POSTERN_TOKEN=${token.slice(0, 5)}•••••••• \\`,
      expect.stringMatching(/^ {2}ghcr\.io\/postern\/node:\d+\.\d+\.\d+$/),
    ]);
    await ready.getByRole('button', { name: 'Got it!' }).click();
    await expectGone(ready);
  });

  it("'Connect This Node' pins the console's certificate while it is self-signed", async () => {
    const dataDir = harness.server.dataDir;
    if (dataDir === undefined) throw new Error('the harness did not start the server');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('pinned') });
    // What the data plane writes for the console's host: one combined PEM, key then certificate.
    const certsDir = join(dataDir, 'certs');
    const pemFile = join(certsDir, '_fallback.pem');
    await mkdir(certsDir, { recursive: true });
    const openssl = promisify(execFile);
    try {
      await openssl('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        pemFile,
        '-out',
        `${pemFile}.crt`,
        '-days',
        '2',
        '-subj',
        '/CN=gateway.test',
      ]);
      await openssl('openssl', ['x509', '-in', `${pemFile}.crt`, '-pubkey', '-noout', '-out', `${pemFile}.pub`]);
      await openssl('openssl', [
        'pkey',
        '-pubin',
        '-in',
        `${pemFile}.pub`,
        '-outform',
        'DER',
        '-out',
        `${pemFile}.der`,
      ]);
      await writeFile(pemFile, `${await readFile(pemFile, 'utf8')}${await readFile(`${pemFile}.crt`, 'utf8')}`);
      const pin = `sha256:${createHash('sha256')
        .update(await readFile(`${pemFile}.der`))
        .digest('base64')}`;

      const page = await harness.openPage(`/nodes/${node.id}`);
      await expectVisible(page.getByRole('heading', { name: 'Connect This Node' }));
      const command = page.getByRole('textbox', { name: 'Connect command' });
      await expect
        .poll(() => command.inputValue())
        .toBe(`postern connect --url https://gateway.test --token <YOUR_TOKEN> --pin ${pin}`);
    } finally {
      await rm(certsDir, { recursive: true, force: true });
    }
  });

  it('filters the list with the View All, Nodes and Gateways chips', async () => {
    const plain = uniqueName('plain');
    const gateway = uniqueName('gw');
    await harness.seed('POST', '/api/nodes', { name: plain });
    await harness.seed('POST', '/api/nodes', { name: gateway, isGateway: true, gatewayNetwork: '192.168.77.0/24' });
    const page = await harness.openPage('/nodes');
    await expectVisible(nodeLink(page, plain));
    await expectVisible(nodeLink(page, gateway));

    const chip = (label: string) =>
      page.getByRole('group', { name: 'Filter nodes' }).getByRole('button', { name: label, exact: true });
    await chip('Gateways').click();
    await expectGone(nodeLink(page, plain));
    await expectVisible(nodeLink(page, gateway));
    expect(await chip('Gateways').getAttribute('aria-pressed')).toBe('true');

    await chip('Nodes').click();
    await expectGone(nodeLink(page, gateway));
    await expectVisible(nodeLink(page, plain));

    await chip('View All').click();
    await expectVisible(nodeLink(page, gateway));
    await expectVisible(nodeLink(page, plain));
  });

  it('disconnects, connects and deletes a node from its row menu, each after a confirmation', async () => {
    const name = uniqueName('switch');
    await harness.seed('POST', '/api/nodes', { name });
    const page = await harness.openPage('/nodes');
    const menu = `Actions for ${name}`;

    await chooseMenuItem(page, menu, 'Disconnect');
    await acceptConfirmation(page, 'Disconnect Node', 'Yes, disconnect!');
    await expectVisible(toast(page, 'Node disconnected successfully!'));

    await chooseMenuItem(page, menu, 'Connect');
    await acceptConfirmation(page, 'Connect Node', 'Yes, connect!');
    await expectVisible(toast(page, 'Node connected successfully!'));

    await chooseMenuItem(page, menu, 'Delete Node');
    await expectVisible(dialog(page, 'Delete Node').getByText(/cannot be undone/));
    await acceptConfirmation(page, 'Delete Node', 'Yes, delete it!');
    await expectVisible(toast(page, 'Node deleted successfully!'));
    await expectGone(nodeLink(page, name));
  });

  it('downloads the WireGuard config of a node from its page', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: uniqueName('dl') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download Config' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\.conf$/);
    const config = await readFile(await download.path(), 'utf8');
    expect(config).toContain('[Interface]');
    expect(config).toContain('[Peer]');
  });

  it("pages the list by 10 with 'Showing x to y of z results'", async () => {
    for (let i = 0; i < 11; i++) await harness.seed('POST', '/api/nodes', { name: uniqueName(`bulk${i}`) });
    const { total } = await harness.seed<{ total: number }>('GET', '/api/nodes?page=1&limit=10');
    const page = await harness.openPage('/nodes');
    const pagination = page.getByRole('navigation', { name: 'Pagination' });
    await expectVisible(pagination.getByText(`Showing 1 to 10 of ${total} results`, { exact: true }));
    expect(await pagination.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    await pagination.getByRole('button', { name: 'Next' }).click();
    await expectVisible(
      pagination.getByText(`Showing 11 to ${Math.min(20, total)} of ${total} results`, { exact: true }),
    );
    expect(await page.getByRole('table').getByRole('link').count()).toBe(Math.min(10, total - 10));
  });

  it('shows changes made elsewhere live, in the list and on the node page', async () => {
    // A gateway, so it is on the first page of the Gateways filter whatever else this file created.
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', {
      name: uniqueName('live'),
      isGateway: true,
      gatewayNetwork: '192.168.78.0/24',
    });
    const list = await harness.openPage('/nodes');
    await list
      .getByRole('group', { name: 'Filter nodes' })
      .getByRole('button', { name: 'Gateways', exact: true })
      .click();
    await expectVisible(nodeLink(list, node.name));
    const detail = await harness.openPage(`/nodes/${node.id}`);
    await expectVisible(detail.getByRole('heading', { name: node.name, exact: true }));

    const renamed = uniqueName('renamed');
    await harness.seed('PATCH', `/api/nodes/${node.id}`, { name: renamed });
    await expectVisible(nodeLink(list, renamed));
    await expectVisible(detail.getByRole('heading', { name: renamed, exact: true }));
  });

  it('closes the node stream when the node page is left', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: uniqueName('leave') });
    const page = await harness.openPage('/');
    const isNodeStream = (url: string) =>
      url.includes('/api/nodes/stream') && new URL(url).searchParams.get('id') === String(node.id);
    const opened = page.waitForEvent('request', { predicate: (request) => isNodeStream(request.url()) });
    await page.goto(`/nodes/${node.id}`);
    const stream = await opened;
    const ended = page.waitForEvent('requestfailed', { predicate: (request) => request === stream });
    await page.getByRole('complementary', { name: 'Sidebar' }).getByRole('link', { name: 'Domain Names' }).click();
    await expectVisible(page.getByRole('heading', { name: 'Domains', exact: true }));
    await ended;
  });

  it('creates a first node from the welcome page and then shows the nodes list', async () => {
    const name = uniqueName('first');
    const page = await harness.openPage('about:blank');
    // The welcome cards show while the gateway holds nothing; this file's gateway has nodes by now, so
    // the answer that decides it says it is empty.
    const none = { total: 0, items: [] };
    await page.route('**/api/system/attention', (route) =>
      route.fulfill({
        json: {
          totals: { nodes: 0, domains: 0, httpServices: 0, tcpServices: 0 },
          offlineNodes: none,
          disconnectedNodeIds: [],
          backendsDown: none,
          certificates: none,
          setAside: none,
          drift: null,
        },
      }),
    );
    await page.goto('/');
    await page.getByRole('button', { name: 'Create Node' }).click();
    const form = dialog(page, 'New Node');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByRole('button', { name: 'Save' }).click();
    const ready = dialog(page, 'Your Node is Ready');
    await expectVisible(ready);
    await ready.getByRole('button', { name: 'Got it!' }).click();
    await expectPath(page, '/nodes');
    await expectVisible(page.getByRole('heading', { name: 'Client / Nodes' }));
  });

  it('edits a node from its page; the page shows the change at once', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: uniqueName('before') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const internet = page.getByRole('row', { name: /Send all internet traffic through the VPN/ });
    await expectVisible(internet.getByText('No', { exact: true }));

    await chooseMenuItem(page, 'Node actions', 'Edit Node');
    const form = dialog(page, 'Edit Node');
    const renamed = uniqueName('after');
    await form.getByLabel('Name', { exact: true }).fill(renamed);
    await form.getByLabel('Send all internet traffic through the VPN').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Node updated successfully!'));
    await expectVisible(page.getByRole('heading', { name: renamed, exact: true }));
    await expectVisible(internet.getByText('Yes', { exact: true }));
    await expectVisible(page.getByRole('navigation', { name: 'Breadcrumb' }).getByText(renamed));
  });

  it('offers the local node no status, node actions or tokens', async () => {
    const { data } = await harness.seed<{ data: { id: number; name: string; isLocal: boolean }[] }>(
      'GET',
      '/api/nodes?page=1&limit=10',
    );
    const local = data.find((node) => node.isLocal);
    if (!local) throw new Error('the server has no local node');
    const list = await harness.openPage('/nodes');
    const menu = await openMenu(list, `Actions for ${local.name}`);
    const items = await menu.getByRole('menuitem').allTextContents();
    expect(items).toEqual(['View Node Details', 'Expose HTTP', 'Expose TCP']);

    const page = await harness.openPage(`/nodes/${local.id}`);
    await expectVisible(page.getByRole('heading', { name: local.name, exact: true }));
    await expectVisible(page.getByRole('heading', { name: 'HTTP Services', exact: true }));
    expect(await page.getByRole('button', { name: 'Node actions' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Node Access Tokens' }).count()).toBe(0);
    expect(await page.getByRole('img', { name: /^(online|idle|offline)$/ }).count()).toBe(0);
  });

  it("shows a gateway's badge, address and subnet on its page, under the 'Client / Nodes' breadcrumb", async () => {
    const node = await harness.seed<{ id: number; name: string; address: string }>('POST', '/api/nodes', {
      name: uniqueName('branch'),
      isGateway: true,
      gatewayNetwork: '192.168.91.0/24',
    });
    const page = await harness.openPage(`/nodes/${node.id}`);
    const header = page.locator('section').filter({ has: page.getByRole('heading', { name: node.name, exact: true }) });
    await expectVisible(header.getByText('Gateway', { exact: true }));
    await expectVisible(header.getByText(node.address, { exact: true }));
    await expectVisible(header.getByText('192.168.91.0/24', { exact: true }));
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Client / Nodes' }).click();
    await expectPath(page, '/nodes');
  });
});
