import { readFileSync } from 'node:fs';
import type { Attention, ServiceTraffic, TrafficPoint } from '@postern/contract';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  chooseMenuItem,
  dialog,
  expectGone,
  expectPath,
  expectVisible,
  toast,
  UNTIL_SHOWN,
  useConsoleHarness,
} from './fixture.js';
import { ADMIN } from './server.js';

// The home page shows what needs attention once the gateway is in use, a
// Services page lists everything published, rows tell the truth about their node and certificate, charts can be
// read, Settings is labelled and changes the password, Ctrl+K finds nodes, domains and services, audit entries are
// sentences with their details and a CSV export, and tables keep their key columns and actions at phone width.
// One gateway for the file: the first test sees it empty, then seeds the world the others share.

const REPO = 'https://github.com/postern/postern';
const FIND_TITLE = 'Find a service, node or domain';

interface World {
  pi: { id: number; token: string };
  office: { id: number };
  web: { id: number };
  mqtt: { id: number };
  dns: { id: number };
  wiki: { id: number };
  domain: { id: number; domain: string };
}

describe('a console for day 2', () => {
  const harness = useConsoleHarness();
  let world: World | undefined;

  /** Two nodes (pi-1 never connected, so offline; office a gateway the operator disconnected) and four services. */
  async function seedWorld(): Promise<World> {
    if (world) return world;
    const pi = await harness.seed<World['pi']>('POST', '/api/nodes', { name: 'pi-1' });
    const office = await harness.seed<World['office']>('POST', '/api/nodes', {
      name: 'office',
      isGateway: true,
      gatewayNetwork: '192.168.50.0/24',
    });
    // A Let's Encrypt domain: its certificate is pending (the data plane is off, so issuance never ends).
    const domain = await harness.seed<World['domain']>('POST', '/api/domains', {
      domain: 'shop.day2.test',
      ssl: 'certbot',
    });
    const web = await harness.seed<World['web']>('POST', `/api/services/${pi.id}/http`, {
      name: 'web',
      domain: domain.domain,
      backendPort: 8080,
    });
    const mqtt = await harness.seed<World['mqtt']>('POST', `/api/services/${pi.id}/tcp`, {
      name: 'mqtt',
      backendPort: 1883,
    });
    const dns = await harness.seed<World['dns']>('POST', `/api/services/${pi.id}/tcp`, {
      name: 'dns',
      proto: 'udp',
      backendPort: 53,
    });
    const wiki = await harness.seed<World['wiki']>('POST', `/api/services/${office.id}/http`, {
      name: 'wiki',
      pathLocation: '/wiki-day2-with-a-long-path-that-wraps-on-a-phone',
      backendHost: '192.168.50.10',
      backendPort: 80,
    });
    await harness.seed('PATCH', `/api/services/${pi.id}/tcp/${mqtt.id}/disable`);
    await harness.seed('PATCH', `/api/nodes/${office.id}/disable`);
    world = { pi, office, web, mqtt, dns, wiki, domain };
    return world;
  }

  const rowOf = (page: Page, name: string) =>
    page.locator('tbody tr').filter({ has: page.getByText(name, { exact: true }) });
  const serviceNames = (page: Page) => page.getByTestId('service-name').allTextContents();
  /** A text of a row as shown (rows hold a phone and a wider layout of some facts; one of them is hidden). */
  const shown = (page: Page, row: string, text: string) =>
    rowOf(page, row).getByText(text, { exact: true }).filter({ visible: true });

  it('home: the welcome cards while empty, then what needs attention and the totals', async () => {
    const page = await harness.openPage('/');
    await expectVisible(page.getByRole('heading', { name: 'Create your first node' }));
    expect(await page.getByRole('heading', { name: /^Needs attention/ }).count()).toBe(0);
    // The links name files and headings of the repository (lib/links.test.ts checks they exist).
    const href = (name: string) => page.getByRole('main').getByRole('link', { name, exact: true }).getAttribute('href');
    expect(await href('Documentation')).toBe(`${REPO}/blob/main/README.md`);
    expect(await href('Docker')).toBe(`${REPO}/blob/main/deploy/README.md#1-docker-compose`);
    expect(await href('Kubernetes')).toBe(`${REPO}/blob/main/deploy/README.md#2-kubernetes-with-helm`);
    expect(await href('Install the CLI')).toBe(
      `${REPO}/blob/main/apps/cli/README.md#installing-on-a-node-the-gateways-one-line-install`,
    );

    const { pi, web, dns } = await seedWorld();
    await page.reload();
    const attention = page.getByRole('region', { name: /^Needs attention/ });
    await expectVisible(attention);
    expect(await page.getByRole('heading', { name: 'Create your first node' }).count()).toBe(0);
    const offline = attention.getByRole('region', { name: /^Nodes offline/ });
    await expectVisible(offline.getByRole('link', { name: 'pi-1' }));
    await expectVisible(offline.getByText('never connected'));
    // Disconnected on purpose is no outage.
    expect(await offline.getByRole('link', { name: 'office' }).count()).toBe(0);
    const totals = page.getByRole('navigation', { name: 'Totals' });
    expect(await totals.getByTestId('total-nodes').textContent()).toBe('2');
    expect(await totals.getByTestId('total-domains').textContent()).toBe('1');
    expect(await totals.getByTestId('total-services').textContent()).toBe('4');
    await expectVisible(totals.getByText('2 HTTP · 2 TCP/UDP'));
    // The spec's links stay, at the foot.
    await expectVisible(
      page.getByRole('navigation', { name: 'Help and links' }).getByRole('link', { name: 'Sponsor' }),
    );

    // What the data plane would report on a real gateway: a backend down, a failed certificate, a change set aside,
    // drift. Each leads to where it is fixed; a backend opens its service's Info on its node's page.
    const faked: Attention = {
      ...(await harness.seed<Attention>('GET', '/api/system/attention')),
      backendsDown: {
        total: 1,
        items: [
          {
            type: 'http',
            id: web.id,
            nodeId: pi.id,
            name: 'web',
            nodeName: 'pi-1',
            since: new Date().toISOString(),
            lastError: 'connect ECONNREFUSED 10.44.0.2:8080',
          },
        ],
      },
      certificates: {
        total: 1,
        items: [{ id: 1, domain: 'shop.day2.test', problem: 'failed', notAfter: null, error: 'NXDOMAIN' }],
      },
      setAside: {
        total: 1,
        items: [
          {
            type: 'tcp',
            id: dns.id,
            nodeId: pi.id,
            name: 'dns',
            nodeName: 'pi-1',
            applyError: 'port 30001/udp is in use',
          },
        ],
      },
      drift: { checkedAt: new Date().toISOString(), differences: ['route web'], repaired: true },
    };
    await page.route('**/api/system/attention', (route) => route.fulfill({ json: faked }));
    await page.reload();
    await expectVisible(
      attention.getByRole('region', { name: /^Certificates/ }).getByText('issuance failed: NXDOMAIN'),
    );
    await expectVisible(attention.getByRole('region', { name: /^Changes set aside/ }).getByText(/port 30001\/udp/));
    await expectVisible(attention.getByText(/found 1 difference .* and repaired them\./));
    await attention
      .getByRole('region', { name: /^Backends down/ })
      .getByRole('link', { name: 'web on pi-1' })
      .click();
    await expectPath(page, `/nodes/${pi.id}`);
    await expectVisible(dialog(page, 'web'));
    await page.unroute('**/api/system/attention');
  });

  it('Services: every service across nodes, searched, filtered and sorted in the URL, with row figures', async () => {
    const { office } = await seedWorld();
    const page = await harness.openPage('/services');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['dns', 'mqtt', 'web', 'wiki']);
    await expectVisible(rowOf(page, 'web').getByTestId('service-figures'));

    const filters = page.getByRole('form', { name: 'Filter services' });
    await filters.getByLabel('Status').selectOption('disabled');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['mqtt', 'wiki']);
    await filters.getByLabel('Kind').selectOption('http');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['wiki']);
    expect(new URL(page.url()).searchParams.get('status')).toBe('disabled');
    await page.goBack();
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['mqtt', 'wiki']);

    // A shared link is the same view.
    await page.goto(`/services?node=${office.id}`);
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['wiki']);
    await page.goto('/services?kind=udp');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['dns']);
    await page.goto('/services?domain=shop.day2.test');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['web']);
    await page.goto('/services');
    await page.getByRole('searchbox', { name: 'Search services by name, domain, path or port' }).fill('wiki-day2');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['wiki']);
    await page.goto('/services?status=everything&kind=icmp');
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['dns', 'mqtt', 'web', 'wiki']);

    const byNode = page.getByRole('button', { name: 'Node', exact: true });
    await byNode.click();
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['wiki', 'dns', 'mqtt', 'web']);
    await byNode.click();
    await expect.poll(() => serviceNames(page), UNTIL_SHOWN).toEqual(['web', 'mqtt', 'dns', 'wiki']);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('node');
    expect(new URL(page.url()).searchParams.get('order')).toBe('desc');
  });

  it('rows tell the truth: node offline or disconnected next to the status, no end date on a pending certificate', async () => {
    const { pi, domain } = await seedWorld();
    const services = await harness.openPage('/services');
    await expectVisible(shown(services, 'web', 'node offline'));
    await expectVisible(
      rowOf(services, 'web').getByRole('img', { name: 'Public', exact: true }).filter({ visible: true }),
    );
    await expectVisible(shown(services, 'wiki', 'node disconnected'));
    await expectVisible(rowOf(services, 'wiki').getByRole('img', { name: 'Not public' }).filter({ visible: true }));

    const node = await harness.openPage(`/nodes/${pi.id}`);
    await expectVisible(shown(node, 'web', 'node offline'));

    const domains = await harness.openPage('/domains');
    const row = rowOf(domains, domain.domain);
    await expectVisible(row.getByText('Pending', { exact: true }));
    expect(await row.getByText(/Valid until/).count()).toBe(0);

    // A failed certificate (the data plane is off here: its answer is made up) is said on each row served with it.
    await domains.route('**/api/domains?*', async (route) => {
      const answer = (await (await route.fetch()).json()) as { data: { certificate: unknown }[] };
      for (const item of answer.data)
        item.certificate = {
          state: 'failed',
          issuer: null,
          notBefore: null,
          notAfter: null,
          fingerprint: null,
          error: 'NXDOMAIN looking up A for shop.day2.test',
        };
      await route.fulfill({ json: answer });
    });
    await domains.goto(`/domains?open=${domain.id}`);
    await expectVisible(shown(domains, 'web', 'certificate failed'));
  });

  it('charts: a time axis, values on hover and by keyboard, 5xx in red, the unfinished minute not a drop', async () => {
    const { pi } = await seedWorld();
    const page = await harness.openPage(`/nodes/${pi.id}`);
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const points: TrafficPoint[] = Array.from({ length: 60 }, (_, i) => ({
      minute: new Date(now - (59 - i) * 60_000).toISOString(),
      requests: i === 50 ? 40 : i === 59 ? 2 : 20,
      errors: i === 50 ? 5 : 0,
      bytesIn: 0,
      bytesOut: 0,
      p50Ms: 5,
      p95Ms: 25,
    }));
    const traffic: ServiceTraffic = {
      points,
      summary: {
        type: 'http',
        minutes: 60,
        requests: 1222,
        status: { '1xx': 0, '2xx': 1217, '3xx': 0, '4xx': 0, '5xx': 5 },
        bytesIn: 0,
        bytesOut: 0,
        p50Ms: 5,
        p95Ms: 25,
        open: 0,
      },
    };
    await page.route('**/api/services/*/http/*/traffic?*', (route) => route.fulfill({ json: traffic }));
    await chooseMenuItem(page, 'Actions for web', 'Info');
    const info = dialog(page, 'web');
    const chart = info.getByRole('slider', { name: 'Requests per minute, last hour' });
    await expectVisible(chart);
    await expectVisible(info.getByText('5xx errors', { exact: true }));
    // Round times under the bars.
    expect((await info.getByTestId('traffic-chart').textContent()) ?? '').toMatch(/\d\d:\d0/);
    expect(await info.locator('[data-error="true"]').count()).toBe(1);
    expect(await info.locator('[data-partial] rect[stroke-dasharray]').count()).toBe(1);

    await chart.focus();
    // The last finished minute first; End reaches the unfinished one, which says so.
    expect(await chart.getAttribute('aria-valuetext')).toMatch(/^\d\d:\d\d: 20 requests, 0 5xx, p95 ≤ 25 ms$/);
    await page.keyboard.press('End');
    await expect.poll(() => chart.getAttribute('aria-valuetext'), UNTIL_SHOWN).toMatch(/\(so far\): 2 requests/);
    for (let i = 0; i < 9; i++) await page.keyboard.press('ArrowLeft');
    await expect.poll(() => chart.getAttribute('aria-valuetext'), UNTIL_SHOWN).toMatch(/: 40 requests, 5 5xx/);
    await expectVisible(info.getByTestId('chart-tooltip').filter({ hasText: '40 requests, 5 5xx' }));
    await page.keyboard.press('Home');
    await expect.poll(() => chart.getAttribute('aria-valuetext'), UNTIL_SHOWN).toMatch(/: 20 requests/);

    // Hovering a bar shows its values.
    const box = await chart.boundingBox();
    if (!box) throw new Error('the chart has no box');
    await page.mouse.move(box.x + (box.width * 50.5) / 60, box.y + box.height / 2);
    await expectVisible(info.getByTestId('chart-tooltip').filter({ hasText: '40 requests, 5 5xx' }));
  });

  it('Ctrl+K finds nodes, domains and services; Enter opens the first; a service opens its Info', async () => {
    const { pi, web, domain } = await seedWorld();
    const page = await harness.openPage('/');
    await expectVisible(page.getByRole('heading', { level: 1 }));
    await page.keyboard.press('Control+k');
    const finder = dialog(page, FIND_TITLE);
    await expectVisible(finder);
    await page.keyboard.type('pi-1');
    await expectVisible(finder.getByRole('region', { name: 'Nodes' }).getByRole('link', { name: /pi-1/ }));
    await page.keyboard.press('Enter');
    await expectVisible(page.getByRole('heading', { level: 1, name: 'pi-1' }));
    await expectGone(finder);

    await page.keyboard.press('Control+k');
    await page.keyboard.type('web');
    await expectVisible(finder.getByRole('region', { name: 'Services' }).getByRole('link', { name: /^web/ }));
    await page.keyboard.press('Enter');
    await expectVisible(dialog(page, 'web'));
    const url = new URL(page.url());
    expect(url.pathname).toBe(`/nodes/${pi.id}`);
    expect(url.searchParams.get('service')).toBe(`http:${web.id}`);
    await dialog(page, 'web').getByRole('button', { name: 'Got it!' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('service'), UNTIL_SHOWN).toBeNull();

    await page.keyboard.press('Control+k');
    await page.keyboard.type('shop.day2');
    const domainResult = finder
      .getByRole('region', { name: 'Domains' })
      .getByRole('link', { name: /shop\.day2\.test/ });
    await expectVisible(domainResult);
    await expectVisible(finder.getByRole('region', { name: 'Services' }).getByRole('link', { name: /^web/ }));
    await domainResult.click();
    await expectPath(page, '/domains');
    await expectVisible(page.getByRole('button', { name: `Hide services of ${domain.domain}` }));
  });

  it('audit: entries as sentences, details one click away, the filtered log as CSV', async () => {
    const { pi } = await seedWorld();
    const page = await harness.openPage('/audit');
    const sentence = 'admin disabled service mqtt on node pi-1';
    await expectVisible(page.getByText(sentence, { exact: true }));
    await expectVisible(page.getByText('admin disconnected node office', { exact: true }));
    const details = page.getByRole('button', { name: `Details: ${sentence}` });
    await details.click();
    expect(await details.getAttribute('aria-expanded')).toBe('true');
    await expectVisible(page.getByText('service.disable', { exact: true }));
    await expectVisible(page.getByText('enabled: true → false', { exact: true }));

    await page.getByLabel('Action').fill('service');
    await page.getByRole('button', { name: 'Apply Filters' }).click();
    await expectGone(page.getByText('admin disconnected node office', { exact: true }));
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^postern-audit-\d{4}-\d\d-\d\d\.csv$/);
    const csv = readFileSync(await download.path(), 'utf8');
    expect(csv.split('\r\n')[0]).toBe(
      '"id","time","sentence","actor","actor_kind","token_id","address","action","target_type","target_id","target_name","node_id","node_name","domain","detail","changes"',
    );
    expect(csv).toContain(`"${sentence}"`);
    // The filter holds: no node entry; and nothing secret, though the node's token was made in this log.
    expect(csv).not.toContain('disconnected node office');
    expect(csv).not.toContain(pi.token);
  });

  it('tables at phone width: key columns and actions in view, addresses wrapped, nothing scrolled sideways', async () => {
    const { pi, domain } = await seedWorld();
    const page = await harness.openPage('/services', { viewport: 'phone' });
    for (const path of ['/services', '/nodes', `/nodes/${pi.id}`, `/domains?open=${domain.id}`, '/audit']) {
      await page.goto(path);
      await expectVisible(page.locator('tbody tr').first());
      const problems = await page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const found: string[] = [];
        for (const scroller of Array.from(document.querySelectorAll<HTMLElement>('main .overflow-x-auto'))) {
          if (scroller.scrollWidth > scroller.clientWidth + 1)
            found.push(`a table scrolls sideways (${scroller.scrollWidth} > ${scroller.clientWidth})`);
        }
        const controls = Array.from(
          document.querySelectorAll<HTMLElement>(
            'main tbody button, main tbody a[href^="https://"], main tbody a[href^="tcp://"], main tbody a[href^="udp://"]',
          ),
        );
        for (const control of controls) {
          const box = control.getBoundingClientRect();
          if (box.width > 0 && (box.left < 0 || box.right > width + 0.5))
            found.push(`${control.getAttribute('aria-label') ?? control.textContent} reaches ${box.right} of ${width}`);
        }
        return found;
      });
      expect(problems.join('\n'), path).toBe('');
    }
    await expectVisible(
      page
        .locator('tbody')
        .getByRole('button', { name: /^Details: / })
        .first(),
    );
  });

  // Last: changing the password ends every other session, the seeding one included.
  it('Settings is labelled, and changes the password from the console', async () => {
    const phone = await harness.openPage('/', { viewport: 'phone' });
    expect(await phone.getByRole('banner').getByRole('link', { name: 'Settings' }).count()).toBe(0);
    await phone.getByRole('button', { name: 'Open sidebar' }).click();
    await phone.getByRole('complementary', { name: 'Sidebar' }).getByRole('link', { name: 'Settings' }).click();
    await expectVisible(phone.getByRole('heading', { name: 'Settings', level: 1 }));

    // A session of its own (the login form), apart from the one the other pages and the seeding share.
    const page = await harness.openPage('/login', { isSignedIn: false });
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const link = page.getByRole('banner').getByRole('link', { name: 'Settings' });
    expect(await link.textContent()).toBe('Settings');
    await link.click();
    const form = page.getByRole('form', { name: 'Change password' });
    const newPassword = 'day-two-new-password-42';
    await form.getByLabel('Current password').fill('not-the-password');
    await form.getByLabel('New password', { exact: true }).fill('short');
    await form.getByLabel('Repeat the new password').fill('different');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectVisible(form.getByText('This field must be at least 12 characters long'));
    await form.getByLabel('New password', { exact: true }).fill(newPassword);
    await form.getByLabel('Repeat the new password').fill(`${newPassword}!`);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectVisible(form.getByText('The new passwords do not match'));
    await form.getByLabel('Repeat the new password').fill(newPassword);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectVisible(form.getByText('The current password is not correct'));

    await form.getByLabel('Current password').fill(ADMIN.password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectVisible(toast(page, 'Password changed. Every other session is signed out.'));
    expect(await form.getByLabel('Current password').inputValue()).toBe('');
    // This session stays; the new password signs in; the old one and the other sessions no longer do.
    await page.goto('/nodes');
    await expectVisible(page.getByRole('heading', { name: 'Client / Nodes' }));
    const signIn = (password: string) =>
      fetch(`${harness.server.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: ADMIN.username, password }),
      });
    expect((await signIn(newPassword)).status).toBe(200);
    expect((await signIn(ADMIN.password)).status).toBe(401);
    const seeding = await fetch(`${harness.server.baseUrl}/api/nodes`, {
      headers: { authorization: `Bearer ${harness.token}` },
    });
    expect(seeding.status).toBe(401);
  });
});
