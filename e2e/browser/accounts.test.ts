import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { storageKeys } from '@postern/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../harness/ports.js';
import { makeServerTls } from '../harness/server-tls.js';
import { axeViolations } from './axe.js';
import { viewports } from './browser.js';
import { dialog, expectGone, expectPath, expectVisible, openMenu, startConsole, uniqueName } from './fixture.js';
import type { ConsoleHarness } from './fixture.js';
import { startServer } from './server.js';

// Several operators (docs/api.md "Accounts and roles"): an owner's invite taken in a fresh browser, the console as a
// viewer and as an operator sees it (and the server's 403 when a role changed under an open page), and a sign-in
// through a real OpenID Connect provider (the system tests' `oidc-provider` program, here on loopback) that makes the
// account of a mapped group. One server, one browser and one provider for the whole file.

const OIDC_PROVIDER = fileURLToPath(new URL('../harness/programs/oidc-provider.mjs', import.meta.url));
/** The console's public URL as the server names it (POSTERN_PUBLIC_HOST of server.ts, the default HTTPS port). */
const PUBLIC_CALLBACK = 'https://gateway.test/login/callback';
const CLIENT = { client_id: 'postern-console', client_secret: randomBytes(16).toString('hex') };
const VIEWER_REFUSAL =
  'Your role (Viewer) may not change nodes, domains, services or access tokens: Owner, Admin, Operator only';

interface Provider {
  issuer: string;
  caFile: string;
  stop(): Promise<void>;
}

/** The test identity provider over HTTPS on 127.0.0.1 (any login name; alice is in the groups staff and ops). */
async function startProvider(): Promise<Provider> {
  const dir = mkdtempSync(join(tmpdir(), 'postern-idp-'));
  const tls = await makeServerTls(dir, 'idp', {
    caSubject: '/CN=IdP test CA',
    subject: '/CN=127.0.0.1',
    subjectAltName: 'IP:127.0.0.1',
  });
  const port = await freePort();
  const issuer = `https://127.0.0.1:${String(port)}`;
  const configFile = join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      issuer,
      host: '127.0.0.1',
      port,
      cert: tls.certFile,
      key: tls.keyFile,
      cookieKey: randomBytes(16).toString('hex'),
      clients: [
        {
          ...CLIENT,
          redirect_uris: [PUBLIC_CALLBACK],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
    }),
  );
  const child: ChildProcess = spawn(process.execPath, [OIDC_PROVIDER, configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the identity provider did not start: ${output}`)), 15_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/^listening /m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`the identity provider exited: ${output}`));
    });
  });
  return {
    issuer,
    caFile: tls.caFile,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Seeded {
  nodeId: number;
  nodeName: string;
  domain: string;
  serviceName: string;
}

describe('several operators', () => {
  let provider: Provider;
  let harness: ConsoleHarness;
  let seeded: Seeded;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    provider = await startProvider();
    // The gateway trusts the provider's CA as it would a real provider's.
    harness = await startConsole(await startServer({ NODE_EXTRA_CA_CERTS: provider.caFile }));
    const domain = `${uniqueName('team')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const nodeName = uniqueName('team-node');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: nodeName });
    const serviceName = uniqueName('wiki');
    await harness.seed('POST', `/api/services/${String(node.id)}/http`, {
      name: serviceName,
      domain,
      backendPort: 3000,
    });
    seeded = { nodeId: node.id, nodeName, domain, serviceName };
  });
  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await harness.close();
    await provider.stop();
  });

  /**
   * A page of its own context, signed in with `token` (the session cookie the server sets), at `path`; desktop and
   * light unless `look` says otherwise.
   */
  async function pageOf(
    token: string,
    path: string,
    prepare?: (page: Page) => Promise<void>,
    look: { viewport?: keyof typeof viewports; theme?: 'light' | 'dark' } = {},
  ): Promise<Page> {
    const theme = look.theme ?? 'light';
    const context = await harness.browser.newContext({
      baseURL: harness.server.baseUrl,
      viewport: viewports[look.viewport ?? 'desktop'],
      colorScheme: theme,
    });
    contexts.push(context);
    await context.addInitScript(([key, value]) => localStorage.setItem(key, value), [
      storageKeys.theme,
      theme,
    ] as const);
    await context.addCookies([
      {
        name: storageKeys.tokenCookie,
        value: token,
        domain: new URL(harness.server.baseUrl).hostname,
        path: '/api',
        httpOnly: true,
        sameSite: 'Strict',
      },
    ]);
    const page = await context.newPage();
    page.on('pageerror', (error) => harness.pageErrors.push(`${page.url()}: ${error.message}`));
    await prepare?.(page);
    await page.goto(path);
    return page;
  }

  /**
   * An account of `role` made through the API (invite, accept, sign in): its username and session token. `nodes`:
   * limited to those nodes by the owner before it signs in.
   */
  async function accountOf(role: string, nodes?: number[]): Promise<{ username: string; id: number; token: string }> {
    const username = uniqueName(role);
    const invite = await harness.seed<{ url: string }>('POST', '/api/invites', { username, role });
    const token = decodeURIComponent(new URL(invite.url).hash.slice(1));
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const post = async (path: string, body: object) => {
      const answer = await fetch(`${harness.server.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(answer.ok, `${path}: ${String(answer.status)}`).toBe(true);
      return (await answer.json()) as Record<string, unknown>;
    };
    await post('/api/auth/invite/accept', { token, password });
    const accounts = await harness.seed<{ data: { id: number; username: string }[] }>('GET', '/api/accounts?limit=100');
    const id = accounts.data.find((account) => account.username === username)?.id ?? 0;
    if (nodes) await harness.seed('PATCH', `/api/accounts/${String(id)}`, { nodes });
    const session = await post('/api/auth/login', { username, password });
    return { username, id, token: String(session.token) };
  }

  /**
   * A write with the page's own session, as any script on the page could: the token behind the session cookie
   * (GET /api/auth/session, the one route that reads it), then POST /api/nodes with it.
   */
  const writeFromPage = (page: Page) =>
    page.evaluate(async () => {
      const session = (await (await fetch('/api/auth/session')).json()) as { token: string };
      const answer = await fetch('/api/nodes', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}` },
        body: JSON.stringify({ name: 'not-allowed' }),
      });
      return { status: answer.status, body: (await answer.json()) as { message?: string } };
    });

  /** The shell's "Signed in as" line shown now (the top bar's on a desktop, the sidebar's on a phone). */
  const signedInAs = (page: Page, name: string, role: string) =>
    page.getByText(`Signed in as ${name} (${role})`, { exact: true }).filter({ visible: true });

  it('an invite taken in a fresh browser signs a viewer in, who is offered no change (dark, phone; axe)', async () => {
    const owner = await harness.openPage('/accounts', { theme: 'light' });
    await expectVisible(owner.getByRole('heading', { name: 'Accounts', exact: true, level: 1 }));
    const violations = await axeViolations(owner, 'accounts-light-desktop');
    await owner.getByRole('button', { name: 'Invite someone', exact: true }).click();
    const form = dialog(owner, 'Invite someone');
    const name = uniqueName('vera');
    await form.getByLabel('Username').fill(name);
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Make the invite link', exact: true }).click();
    const made = dialog(owner, 'Invite made');
    await expectVisible(made);
    const link = await made.getByRole('textbox', { name: 'Invite link' }).inputValue();
    violations.push(...(await axeViolations(owner, 'accounts-invite-made-light-desktop')));
    await made.getByRole('button', { name: 'Close' }).first().click();
    await expectGone(made);
    await expectVisible(owner.getByRole('cell', { name, exact: true }));

    // The link names the public host; the fresh browser opens the same page on this server.
    const url = new URL(link);
    expect(url.pathname).toBe('/invite');
    const invitee = await harness.openPage(`/invite${url.hash}`, {
      isSignedIn: false,
      theme: 'dark',
      viewport: 'phone',
    });
    await expectVisible(invitee.getByText(name, { exact: true }));
    violations.push(...(await axeViolations(invitee, 'invite-dark-phone')));
    await invitee.getByLabel('Password', { exact: true }).fill('a-long-viewer-password');
    await invitee.getByLabel('Repeat the password').fill('a-long-viewer-password');
    await invitee.getByRole('button', { name: 'Make my account' }).click();
    await expectPath(invitee, '/settings');
    // On a phone the name is in the (closed) sidebar: open it.
    await invitee.getByRole('button', { name: 'Open sidebar' }).click();
    await expectVisible(signedInAs(invitee, name, 'Viewer'));
    // Logs are a viewer's to read; Accounts is the owners'.
    await expectVisible(invitee.getByRole('link', { name: 'Audit Log', exact: true }).filter({ visible: true }));
    expect(await invitee.getByRole('link', { name: 'Accounts', exact: true }).count()).toBe(0);

    // Read only: no add, edit or delete; no tokens, no node configuration.
    await invitee.goto('/nodes');
    await expectVisible(invitee.getByRole('link', { name: seeded.nodeName, exact: true }));
    expect(await invitee.getByRole('button', { name: 'Add Client' }).count()).toBe(0);
    const rowMenu = await openMenu(invitee, `Actions for ${seeded.nodeName}`);
    await expectVisible(rowMenu.getByRole('menuitem', { name: 'View Node Details' }));
    expect(await rowMenu.getByRole('menuitem', { name: /Edit|Delete|Expose|Download|Disconnect/ }).count()).toBe(0);
    await invitee.keyboard.press('Escape');
    await invitee.goto(`/nodes/${String(seeded.nodeId)}`);
    await expectVisible(invitee.getByRole('heading', { name: 'Node Info' }));
    await expectVisible(invitee.getByRole('heading', { name: 'HTTP Services' }));
    for (const hidden of ['Node Access Tokens', 'Config Status'])
      expect(await invitee.getByRole('heading', { name: hidden }).count(), hidden).toBe(0);
    expect(await invitee.getByRole('button', { name: 'Add Service' }).count()).toBe(0);
    await invitee.goto('/domains');
    await expectVisible(invitee.getByText(seeded.domain, { exact: true }).first());
    expect(await invitee.getByRole('button', { name: 'Add Domain' }).count()).toBe(0);

    // The server refuses a write from this session with the role's message, and the session stays.
    const refused = await writeFromPage(invitee);
    expect(refused).toEqual({ status: 403, body: expect.objectContaining({ message: VIEWER_REFUSAL }) });
    await invitee.goto('/accounts');
    await expectVisible(invitee.getByText('Only an owner may see and manage accounts.'));
    expect(violations).toEqual([]);
  });

  it('an operator is offered node, domain, service and token changes but no Accounts and no settings cards', async () => {
    const operator = await accountOf('operator');
    const page = await pageOf(operator.token, '/nodes');
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    await expectVisible(page.getByRole('button', { name: 'Add Client' }));
    const rowMenu = await openMenu(page, `Actions for ${seeded.nodeName}`);
    await expectVisible(rowMenu.getByRole('menuitem', { name: 'Edit Node' }));
    await expectVisible(rowMenu.getByRole('menuitem', { name: 'Delete Node' }));
    await page.keyboard.press('Escape');
    await page.goto(`/nodes/${String(seeded.nodeId)}`);
    await expectVisible(page.getByRole('heading', { name: 'Node Access Tokens' }));
    await expectVisible(page.locator('#http-services').getByRole('button', { name: 'Add Service' }));
    await page.goto('/domains');
    await expectVisible(page.getByRole('button', { name: 'Add Domain' }));
    // Once the page knows the account (until then it offers everything; the server decides anyway).
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    expect(await page.getByRole('link', { name: 'Accounts', exact: true }).count()).toBe(0);

    // Settings: the provider, DNS, CA and notification cards are the admins'; an operator has only its own password
    // and second factor there, and the console does not ask for the cards' data.
    const cardReads: string[] = [];
    page.on('request', (request) => {
      if (/\/api\/(access\/providers|certificates\/|notifications\/)/.test(request.url()))
        cardReads.push(request.url());
    });
    await page.goto('/settings');
    await expectVisible(page.getByRole('heading', { name: 'Two-factor sign-in' }));
    await expectVisible(page.getByRole('heading', { name: 'Password', exact: true }));
    // The account known and every chunk and request of the page settled, before judging what it left out.
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    await page.waitForLoadState('networkidle');
    for (const card of ['Identity providers', 'DNS providers', 'Certificate authorities', 'Notifications'])
      expect(await page.getByRole('heading', { name: card, exact: true }).count(), card).toBe(0);
    expect(cardReads).toEqual([]);
  });

  it('an operator limited to one node sees only its things and is offered nothing it cannot use (light desktop, dark phone; axe)', async () => {
    // Another node with a domain and a service the operator must never see.
    const otherNode = uniqueName('other-node');
    const other = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: otherNode });
    const otherDomain = `${uniqueName('other')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain: otherDomain, ssl: 'self-signed', skipValidation: true });
    const otherService = uniqueName('hidden-svc');
    await harness.seed('POST', `/api/services/${String(other.id)}/http`, {
      name: otherService,
      domain: otherDomain,
      backendPort: 3000,
    });
    const operator = await accountOf('operator', [seeded.nodeId]);
    // Every answer the console got: a refusal would be a toast on a page it offered.
    const refused: string[] = [];
    const watch = async (fresh: Page) => {
      fresh.on('response', (answer) => {
        if (answer.status() === 403) refused.push(`${answer.request().method()} ${answer.url()}`);
      });
    };
    const others = [otherNode, otherDomain, otherService];
    const expectNoneOf = async (page: Page, where: string) => {
      for (const text of others) expect(await page.getByText(text).count(), `${where}: ${text}`).toBe(0);
    };

    const page = await pageOf(operator.token, '/nodes', watch);
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    await expectVisible(page.getByRole('link', { name: seeded.nodeName, exact: true }));
    await expectNoneOf(page, '/nodes');
    // It could not see a node it made: adding nodes is for accounts that see every node.
    expect(await page.getByRole('button', { name: 'Add Client' }).count()).toBe(0);
    // Its own node's tokens and services are its to change.
    const rowMenu = await openMenu(page, `Actions for ${seeded.nodeName}`);
    await expectVisible(rowMenu.getByRole('menuitem', { name: 'Edit Node' }));
    await page.keyboard.press('Escape');
    for (const hidden of ['Audit Log', 'Certificates'])
      expect(await page.getByRole('link', { name: hidden, exact: true }).count(), hidden).toBe(0);
    const violations = await axeViolations(page, 'nodes-limited-light-desktop');

    await page.goto('/services');
    await expectVisible(page.getByText(seeded.serviceName).first());
    await expectNoneOf(page, '/services');
    violations.push(...(await axeViolations(page, 'services-limited-light-desktop')));

    await page.goto('/domains');
    await expectVisible(page.getByText(seeded.domain, { exact: true }).first());
    // The account known (until then the console offers everything), before judging what it left out.
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    await expectNoneOf(page, '/domains');
    // Read-only: a domain's settings and its whole log reach every node's services on it.
    expect(await page.getByRole('button', { name: 'Add Domain' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: `Actions for ${seeded.domain}` }).count()).toBe(0);
    violations.push(...(await axeViolations(page, 'domains-limited-light-desktop')));

    await page.goto('/settings');
    await expectVisible(page.getByRole('heading', { name: 'Two-factor sign-in' }));
    await expectVisible(signedInAs(page, operator.username, 'Operator'));
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('heading', { name: 'Notifications', exact: true }).count()).toBe(0);

    // A phone in the dark: its own home page, and the menu without what spans every node.
    const phone = await pageOf(operator.token, '/', watch, { viewport: 'phone', theme: 'dark' });
    await expectVisible(phone.getByRole('heading', { name: 'Your nodes' }));
    await expectNoneOf(phone, 'home');
    await phone.getByRole('button', { name: 'Open sidebar' }).click();
    await expectVisible(signedInAs(phone, operator.username, 'Operator'));
    await expectVisible(phone.getByRole('link', { name: 'Services', exact: true }).filter({ visible: true }).first());
    for (const hidden of ['Audit Log', 'Certificates'])
      expect(await phone.getByRole('link', { name: hidden, exact: true }).count(), hidden).toBe(0);
    violations.push(...(await axeViolations(phone, 'home-limited-dark-phone')));
    await phone.keyboard.press('Escape');
    await phone.goto('/services');
    await expectVisible(phone.getByText(seeded.serviceName).first());
    await expectNoneOf(phone, 'phone /services');
    violations.push(...(await axeViolations(phone, 'services-limited-dark-phone')));

    expect(violations).toEqual([]);
    expect(refused).toEqual([]);
  });

  it('the server refuses a viewer whose screen offers a change anyway, and the console shows its message', async () => {
    // The screens hide what a role may not do as a courtesy; here the console is told the viewer is an operator (its
    // account answer rewritten in the browser), so it offers "Add Client", and only the server stands in the way.
    const viewer = await accountOf('viewer');
    const page = await pageOf(viewer.token, '/nodes', async (fresh) => {
      await fresh.route('**/api/auth/account', async (route) => {
        const answer = await route.fetch();
        const body = (await answer.json()) as Record<string, unknown>;
        await route.fulfill({ response: answer, json: { ...body, role: 'operator' } });
      });
    });
    await expectVisible(signedInAs(page, viewer.username, 'Operator'));
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    const name = uniqueName('refused');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByRole('button', { name: 'Save' }).click();
    // An error toast is an alert.
    await expectVisible(page.getByRole('alert').filter({ hasText: VIEWER_REFUSAL }));
    // Still signed in, on the same page, and nothing was made.
    expect(new URL(page.url()).pathname).toBe('/nodes');
    await expectVisible(signedInAs(page, viewer.username, 'Operator'));
    const nodes = await harness.seed<{ data: { name: string }[] }>('GET', '/api/nodes?limit=100');
    expect(nodes.data.map((node) => node.name)).not.toContain(name);
  });

  it('signs in with the test identity provider: a member of a mapped group lands on the dashboard as its role', async () => {
    const made = await harness.seed<{ id: number }>('POST', '/api/access/providers', {
      name: 'Corp',
      issuer: provider.issuer,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      scopes: ['openid', 'email', 'profile', 'groups'],
    });
    await harness.seed('PATCH', `/api/access/providers/${String(made.id)}/console`, {
      consoleSignIn: true,
      groupRoles: [
        { group: 'staff', role: 'viewer' },
        { group: 'ops', role: 'operator' },
      ],
    });
    const context = await harness.browser.newContext({
      baseURL: harness.server.baseUrl,
      viewport: viewports.desktop,
      // The provider's certificate is the test's own.
      ignoreHTTPSErrors: true,
    });
    contexts.push(context);
    // The provider sends the browser to the console's public URL; here the console is this server on loopback.
    await context.route(
      (url) => url.href.startsWith(PUBLIC_CALLBACK),
      (route) => {
        const back = new URL(route.request().url());
        return route.fulfill({
          status: 302,
          headers: { location: `${harness.server.baseUrl}${back.pathname}${back.search}` },
        });
      },
    );
    const page = await context.newPage();
    page.on('pageerror', (error) => harness.pageErrors.push(`${page.url()}: ${error.message}`));
    await page.goto('/login');
    await page.getByRole('button', { name: 'Sign in with Corp', exact: true }).click();
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any-password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    // The development interactions ask for a consent once.
    await expect
      .poll(
        async () => {
          if (page.url().startsWith(harness.server.baseUrl)) return true;
          const consent = page.getByRole('button', { name: 'Continue' });
          if ((await consent.count()) > 0) await consent.click().catch(() => undefined);
          return false;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe(true);
    await expectPath(page, '/');
    await expectVisible(signedInAs(page, 'alice@corp.test', 'Operator'));
    await expect.poll(() => page.getByRole('link', { name: 'Accounts', exact: true }).count()).toBe(0);
  });
});
