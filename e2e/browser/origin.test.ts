import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startGateway, type Gateway } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import type { ManagedProcess } from '../harness/processes.js';
import { createSystemTopology, type SystemTopology } from '../harness/topology.js';
import { startWireguard, waitForHandshake } from '../harness/wireguard.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { launchBrowser } from './browser.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The console's origin is the console's alone. A hostile node serves a page on its own domain and,
// as a service without a domain, on the gateway's own host name (another port): an operator signed in to the console
// who opens either page leaks nothing — no script there reads the session, no API call made from there succeeds, and
// the node's backend never receives the session. The browser reaches the gateway's nginx by name on 443 and 8443,
// exactly as in production (names mapped to the gateway's management address; nothing leaves the lab). The node's
// domain is a sibling of the console's host name, so its pages also try to plant session cookies (cookie tossing).

const EVIL_SITE = fileURLToPath(new URL('../harness/programs/evil-site.mjs', import.meta.url));
const PARENT_DOMAIN = 'e2e.test';
const CONSOLE_HOST = `gw.${PARENT_DOMAIN}`;
/** A node's own domain: a sibling of the console's host name, so its pages may set cookies for the parent. */
const EVIL_DOMAIN = `evil.${PARENT_DOMAIN}`;
const EVIL_PORT = 8080;

interface Report {
  origin: string;
  cookie: string;
  local: string;
  session: string;
  apiNodes: string;
  apiSession: string;
  apiWrite: string;
  ownApiSession: string;
  frameCookie: string;
}

describe.skipIf(!canRun('netns', 'server-build'))('the console’s origin against a hostile node', () => {
  const lab = new Lab();
  let topology: SystemTopology;
  let gateway: Gateway;
  let browser: Browser;
  let site: ManagedProcess;

  beforeAll(async () => {
    topology = await createSystemTopology(lab);
    gateway = await startGateway(lab, {
      ns: topology.gatewayNs,
      apiIp: topology.gatewayMgmtIp,
      publicHost: CONSOLE_HOST,
      wgInterface: lab.ifName('gw'),
    });
    const api = await gateway.login();
    const node = await api.createNode({ name: 'hostile' });
    const host = await topology.addHost('evil', 11);
    // The node dials the gateway's public address (its name resolves nowhere inside the lab).
    const config = (await api.downloadNodeConfig(node.id)).replace(
      `Endpoint = ${CONSOLE_HOST}:`,
      `Endpoint = ${topology.gatewayPublicIp}:`,
    );
    await waitForHandshake(await startWireguard(lab, host.ns, lab.ifName('evil'), config), 15_000);
    site = lab.spawn(host.ns, 'hostile site', process.execPath, [
      EVIL_SITE,
      node.address ?? '',
      String(EVIL_PORT),
      `https://${CONSOLE_HOST}`,
      PARENT_DOMAIN,
    ]);
    await site.waitForOutput(/^listening$/m, 5000);
    await api.createHttpService(node.id, { name: 'evil-domain', domain: EVIL_DOMAIN, backendPort: EVIL_PORT });
    await api.createHttpService(node.id, { name: 'evil-path', pathLocation: '/evil', backendPort: EVIL_PORT });
    browser = await launchBrowser([
      `--host-resolver-rules=MAP ${CONSOLE_HOST} ${topology.gatewayMgmtIp},MAP ${EVIL_DOMAIN} ${topology.gatewayMgmtIp}`,
    ]);
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await browser?.close();
    await lab.destroy();
    expect(lab.leftovers()).toEqual([]);
  });

  const reports = (): Report[] =>
    site.text
      .split('\n')
      .filter((line) => line.startsWith('{"report"'))
      .map((line) => (JSON.parse(line) as { report: Report }).report);
  const seen = (): { path: string; headers: Record<string, string> }[] =>
    site.text
      .split('\n')
      .filter((line) => line.startsWith('{"seen"'))
      .map((line) => (JSON.parse(line) as { seen: { path: string; headers: Record<string, string> } }).seen);

  it('leaks nothing of a signed-in operator’s session to a node’s page, on its domain or on the gateway’s host', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`https://${CONSOLE_HOST}/login`);
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Postern' }).waitFor();
    const [cookie] = (await context.cookies()).filter((c) => c.name === '__Host-token');
    // The session is a cookie only the server sees: HttpOnly, of the console's host alone (the prefix: no Domain).
    expect(cookie).toMatchObject({
      domain: CONSOLE_HOST,
      path: '/',
      httpOnly: true,
      sameSite: 'Strict',
      secure: true,
    });
    const token = cookie?.value ?? '';
    expect(token.length).toBeGreaterThan(20);

    for (const url of [`https://${EVIL_DOMAIN}/`, `https://${CONSOLE_HOST}:8443/evil/`]) {
      const before = reports().length;
      await page.goto(url);
      await waitFor(() => reports().length > before, { timeoutMs: 15_000, what: `the page at ${url} to report` });
    }
    const onDomain = reports().find((r) => r.origin === `https://${EVIL_DOMAIN}`);
    const onHostPort = reports().find((r) => r.origin === `https://${CONSOLE_HOST}:8443`);
    expect(onDomain, site.text).toBeDefined();
    expect(onHostPort, site.text).toBeDefined();
    for (const report of [onDomain, onHostPort]) {
      expect(JSON.stringify(report)).not.toContain(token);
      expect(report?.cookie).toBe('');
      expect(report?.local).toBe('{}');
      // The console's API answers no other origin: reads are blocked (no CORS), and nothing is created.
      expect(report?.apiNodes).toMatch(/^blocked /);
      expect(report?.apiSession).toMatch(/^blocked /);
    }
    // On the gateway's host, the cookie's path belongs to nobody: nginx answers it itself.
    expect(onHostPort?.ownApiSession).toMatch(/^status 404 /);
    expect(onHostPort?.frameCookie).toBe('cookie: ');
    // Nothing the page tried created anything.
    const nodes = await (await gateway.login()).listNodes();
    expect(nodes.map((n) => n.name)).not.toContain('planted');
    // The node's backend never received the session: no cookie, no bearer, on any request.
    const received = JSON.stringify(seen());
    expect(seen().length).toBeGreaterThan(2);
    expect(received).not.toContain(token);
    expect(received).not.toMatch(/authorization/i);
    await context.close();
  }, 90_000);

  it('keeps the operator signed in through cookies tossed from a sibling domain and set on the no-domain port', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`https://${CONSOLE_HOST}/login`);
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome to Postern' }).waitFor();
    const session = async () =>
      (await context.cookies()).find((c) => c.name === '__Host-token' && c.domain === CONSOLE_HOST);
    const token = (await session())?.value ?? '';
    expect(token.length).toBeGreaterThan(20);
    const tossed = () => seen().filter((request) => request.path.endsWith('/tossed')).length;

    // A page of the node's sibling domain, then one of its service without a domain on the console's host name: each
    // plants every session cookie it can, by script and by Set-Cookie (docs/api.md "Session cookie").
    for (const url of [`https://${EVIL_DOMAIN}/toss`, `https://${CONSOLE_HOST}:8443/evil/toss`]) {
      const before = tossed();
      await page.goto(url);
      await waitFor(() => tossed() > before, { timeoutMs: 15_000, what: `the page at ${url} to toss its cookies` });
    }
    // The browser holds what it accepted; none of it is the console's own cookie, which is untouched.
    const jar = await context.cookies();
    // (The sibling's own host keeps the `__Host-token` it set for itself: that one is never sent to the console.)
    const sessions = jar.filter((c) => c.name === '__Host-token' && c.domain !== EVIL_DOMAIN);
    expect(
      sessions.map((c) => [c.domain, c.value]),
      JSON.stringify(jar),
    ).toEqual([[CONSOLE_HOST, token]]);
    expect(jar.some((c) => c.name === 'token' && c.domain === `.${PARENT_DOMAIN}`)).toBe(true); // the tossing happened

    // Back on the console: every reload finds the session again.
    for (let reload = 0; reload < 2; reload++) {
      await page.goto(`https://${CONSOLE_HOST}/`);
      await page.getByRole('heading', { name: 'Welcome to Postern' }).waitFor({ timeout: 15_000 });
      expect(new URL(page.url()).pathname).toBe('/');
      expect((await session())?.value).toBe(token);
    }
    // The no-domain service never saw the session, though the browser sends it to every port of the host.
    expect(JSON.stringify(seen())).not.toContain(token);
    await context.close();
  }, 90_000);
});
