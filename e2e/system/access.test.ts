import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type DomainAccessUpdate } from '@postern/contract';
import { snap } from '../browser/browser.js';
import { startBackend } from '../harness/backends.js';
import { runInAllowingFailure } from '../harness/exec.js';
import { Lab } from '../harness/lab.js';
import { launchBrowserIn, startOidcProvider, type OidcProvider } from '../harness/oidc.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { startSystem, stopSystem, type System } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// Who may reach a published service (docs/ACCESS.md), end to end: the real gateway (nginx + Lua), a real
// OpenID Connect provider (the certified `oidc-provider` package) in a namespace of its own, and visitors on the
// internet: Chromium and curl in the client namespace. One gateway boot for every promise.

const LOCAL_NODE = 1;
const BACKEND_PORT = 8080;
const APPLY_DEADLINE_MS = 15_000;
const SSO = 'sso.e2e.test';
const PW = 'pw.e2e.test';
const SHARE = 'share.e2e.test';
const OPEN = 'open.e2e.test';
const PIN = 'e2e-visitor-pin';
const CLIENT = { client_id: 'postern-e2e', client_secret: 'e2e-client-secret-0123456789' };

interface Answer {
  status: number;
  headers: Record<string, string[]>;
  body: string;
}

describe.skipIf(!canRun('netns', 'server-build'))('access to published services (docs/ACCESS.md)', () => {
  let system: System;
  let idp: OidcProvider;
  let otherIdp: OidcProvider;
  let gatewayIp = '';
  let browser: Browser;
  const domainIds = new Map<string, number>();
  const serviceIds = new Map<string, number>();
  const timings: Record<string, number> = {};

  /** curl from the client namespace: no redirects followed, headers kept. */
  async function visit(
    url: string,
    options: { headers?: Record<string, string>; form?: Record<string, string>; sourceIp?: string } = {},
  ): Promise<Answer> {
    const target = new URL(url);
    const args = ['-sS', '-k', '-i', '--max-time', '5', '--resolve', `${target.hostname}:443:${gatewayIp}`];
    for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
    if (options.sourceIp) args.push('--interface', options.sourceIp);
    if (options.form) {
      args.push('-X', 'POST');
      for (const [name, value] of Object.entries(options.form)) args.push('--data-urlencode', `${name}=${value}`);
    }
    const result = await runInAllowingFailure(system.topology.clientNs, 'curl', [...args, url], { timeoutMs: 10_000 });
    const cut = result.stdout.indexOf('\r\n\r\n');
    const head = result.stdout.slice(0, Math.max(cut, 0)).split('\r\n');
    const status = Number(/^HTTP\/\S+ (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
    const headers: Record<string, string[]> = {};
    for (const line of head.slice(1)) {
      const at = line.indexOf(':');
      if (at <= 0) continue;
      const name = line.slice(0, at).toLowerCase();
      (headers[name] ??= []).push(line.slice(at + 1).trim());
    }
    return { status, headers, body: cut < 0 ? '' : result.stdout.slice(cut + 4) };
  }

  /** The cookie a Set-Cookie header of `answer` sets, as `name=value`. */
  const cookieOf = (answer: Answer): string => (answer.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
  const backendSaw = (answer: Answer) =>
    JSON.parse(answer.body) as { label: string; url: string; headers: Record<string, string | undefined> };

  async function publish(name: string, domain: string): Promise<void> {
    const service = await system.api.createHttpService(LOCAL_NODE, {
      name,
      domain,
      backendHost: '127.0.0.1',
      backendPort: BACKEND_PORT,
    });
    serviceIds.set(domain, service.id);
    const domains = await system.api.call(operations.listDomains, { query: { search: domain } });
    domainIds.set(domain, domains.data.find((d) => d.domain === domain)?.id ?? 0);
  }

  beforeAll(async () => {
    const lab = new Lab();
    system = await startSystem(lab, async (topology) => {
      const host = await topology.addHost('idp', 30);
      // The console signs operators in through the same provider (docs/api.md "Accounts and roles"): its callback is
      // the console's page.
      const consoleCallback = `https://${topology.gatewayPublicIp}/login/callback`;
      idp = await startOidcProvider(lab, host.ns, host.publicIp, [
        { ...CLIENT, redirect_uris: [`https://${SSO}/_postern/access/callback`, consoleCallback] },
      ]);
      // Another organisation's provider, whose users have the same subjects (alice, bob, …).
      const other = await topology.addHost('idp2', 31);
      otherIdp = await startOidcProvider(lab, other.ns, other.publicIp, [
        { ...CLIENT, redirect_uris: [consoleCallback] },
      ]);
      // The gateway trusts the providers' test CAs, as it would a public one.
      const cas = join(lab.makeTempDir('idp-cas'), 'cas.pem');
      writeFileSync(cas, readFileSync(idp.caFile, 'utf8') + readFileSync(otherIdp.caFile, 'utf8'));
      return { NODE_EXTRA_CA_CERTS: cas };
    });
    gatewayIp = system.topology.gatewayPublicIp;
    await startBackend(system.lab, system.topology.gatewayNs, 'http', '127.0.0.1', BACKEND_PORT, 'local');
    for (const [name, domain] of [
      ['Team wiki', SSO],
      ['Files', PW],
      ['Reports', SHARE],
      ['Status page', OPEN],
    ] as const)
      await publish(name, domain);
    const provider = await system.api.call(operations.createIdentityProvider, {
      body: {
        name: 'Corp IdP',
        issuer: idp.issuer,
        clientId: CLIENT.client_id,
        clientSecret: CLIENT.client_secret,
        scopes: ['openid', 'email', 'profile', 'groups'],
      },
    });
    const protect = (domain: string, body: DomainAccessUpdate) =>
      system.api.call(operations.updateDomainAccess, { params: { id: domainIds.get(domain) ?? 0 }, body });
    await protect(SSO, {
      mode: 'protected',
      providerId: provider.id,
      allowEmailDomains: ['corp.test'],
      allowGroups: ['partners'],
      bypassPaths: ['/hooks'],
    });
    await protect(PW, { mode: 'protected', password: PIN });
    await protect(SHARE, { mode: 'protected', shareLinks: true });
    await waitFor(
      // Routed (no 404); whether the protected ones are protected is what the tests check.
      async () => (await visit(`https://${OPEN}/`)).status === 200 && (await visit(`https://${PW}/`)).status !== 404,
      { timeoutMs: APPLY_DEADLINE_MS, what: 'the services to be served' },
    );
    browser = await launchBrowserIn(system.lab, system.topology.clientNs, [
      `--host-resolver-rules=MAP *.e2e.test ${gatewayIp}`,
    ]);
  }, 120_000);

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await browser?.close();
    console.log(`access timings (ms): ${JSON.stringify(timings)}`);
    expect(await stopSystem(system)).toEqual([]);
  });

  /** Signs in through the provider's own pages as `login` (any password; the provider's development login). */
  async function signInThroughProvider(page: Page, login: string): Promise<void> {
    await page.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any-password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  let alice: BrowserContext;

  it('signs a visitor in through the provider with Chromium; the backend learns who, and only from the gateway', async () => {
    alice = await browser.newContext();
    const page = await alice.newPage();
    await page.goto(`https://${SSO}/dashboard?tab=1`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/_postern/access/sign-in');
    await expect.poll(() => page.getByRole('heading', { name: 'Team wiki' }).count()).toBe(1);
    await snap(page, 'access-sign-in-light');
    for (const [name, scheme, viewport] of [
      ['access-sign-in-dark', 'dark', { width: 1366, height: 860 }],
      ['access-sign-in-phone', 'light', { width: 390, height: 844 }],
    ] as const) {
      const shot = await browser.newContext({ colorScheme: scheme, viewport });
      const other = await shot.newPage();
      await other.goto(page.url());
      await snap(other, name);
      await shot.close();
    }
    await signInThroughProvider(page, 'alice');
    await expect.poll(() => page.url()).toBe(`https://${SSO}/dashboard?tab=1`);
    const seen = JSON.parse((await page.locator('body').textContent()) ?? '{}') as ReturnType<typeof backendSaw>;
    expect(seen.headers).toMatchObject({
      'x-postern-user': 'alice',
      'x-postern-email': 'alice@corp.test',
      'x-postern-groups': 'staff,ops',
    });
    expect(seen.headers.cookie ?? '').not.toContain('__Host-postern');
    // Headers the visitor's own page sends do not pass for the gateway's; the cookie is out of every script's reach.
    const forged = await page.evaluate(async () => {
      const answer = await fetch('/whoami', {
        headers: { 'X-Postern-User': 'admin', 'x-postern-email': 'boss@corp.test', 'X-POSTERN-GROUPS': 'admins' },
      });
      return { body: (await answer.json()) as { headers: Record<string, string> }, cookie: document.cookie };
    });
    expect(forged.body.headers).toMatchObject({
      'x-postern-user': 'alice',
      'x-postern-email': 'alice@corp.test',
      'x-postern-groups': 'staff,ops',
    });
    expect(forged.cookie).not.toContain('postern');
    // The sign-in is in the audit log.
    const audit = await system.api.call(operations.listAudit, { query: { action: 'access.sign-in' } });
    expect(audit.data[0]).toMatchObject({ actor: { name: 'alice@corp.test' }, detail: 'sso' });
  });

  it('refuses a user outside the allow-list, the page saying why', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`https://${SSO}/`);
    await signInThroughProvider(page, 'eve');
    await expect.poll(() => page.getByText('eve@evil.test, who is not allowed to reach this service').count()).toBe(1);
    await snap(page, 'access-refused');
    expect(await page.getByRole('heading', { name: 'Team wiki' }).count()).toBe(1);
    expect((await context.cookies()).map((c) => c.name)).not.toContain(expect.stringMatching(/^__Host-postern-\d/));
    await context.close();
  });

  /** A request from the page itself (its cookies, its origin): the status nginx answers with. */
  const statusFrom = (page: Page, path: string): Promise<number> =>
    page.evaluate(
      async (url) => (await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' })).status,
      path,
    );

  it('ends access at sign-out and at revocation, by the next request', async () => {
    const page = await alice.newPage();
    await page.goto(`https://${SSO}/dashboard`);
    expect(await statusFrom(page, '/data')).toBe(200);
    // Revoked by the operator: the next request is refused.
    const ssoService = { nodeId: LOCAL_NODE, id: serviceIds.get(SSO) ?? 0 };
    const sessions = await system.api.call(operations.listVisitorSessions, { params: ssoService });
    const live = sessions.data.find((s) => s.email === 'alice@corp.test' && !s.revoked);
    expect(live).toBeDefined();
    let started = performance.now();
    await system.api.call(operations.revokeVisitorSession, { params: { ...ssoService, sessionId: live?.id ?? 0 } });
    const afterRevoke = await statusFrom(page, '/data');
    timings.revokeToRefusedMs = Math.round(performance.now() - started);
    expect(afterRevoke).toBe(401);
    // Signed in again (the provider remembers alice: at most a consent), then signed out by the visitor.
    await page.goto(`https://${SSO}/again`);
    await page.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
    await expect
      .poll(async () => {
        const url = new URL(page.url());
        if (url.hostname === SSO && url.pathname === '/again') return 'back';
        const consent = page.getByRole('button', { name: 'Continue' });
        if ((await consent.count()) > 0) await consent.click();
        return url.pathname;
      })
      .toBe('back');
    expect(await statusFrom(page, '/data')).toBe(200);
    // A copy of the cookie taken before signing out (what someone who copied it holds) must die with the sign-out too.
    const copied = (await alice.cookies(`https://${SSO}`)).find((c) => c.name.startsWith('__Host-postern-'));
    expect(copied).toBeDefined();
    await page.goto(`https://${SSO}/_postern/access/sign-out`);
    await snap(page, 'access-sign-out');
    started = performance.now();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByText('You are signed out').count()).toBe(1);
    const afterSignOut = await statusFrom(page, '/data');
    timings.signOutToRefusedMs = Math.round(performance.now() - started);
    expect(afterSignOut).toBe(401);
    const replayed = await visit(`https://${SSO}/data`, {
      headers: { cookie: `${copied?.name ?? ''}=${copied?.value ?? ''}`, accept: '*/*' },
    });
    expect(replayed.status).toBe(401);
    await alice.close();
  });

  it('lets a share link in until it is revoked, and never keeps its token in the address', async () => {
    const shareService = { nodeId: LOCAL_NODE, id: serviceIds.get(SHARE) ?? 0 };
    const link = await system.api.call(operations.createShareLink, { params: shareService, body: { name: 'Bob' } });
    const used = await visit(link.url);
    expect(used.status).toBe(302);
    expect(used.headers.location?.[0]).toBe(`https://${SHARE}/`);
    const cookie = cookieOf(used);
    expect(cookie).toMatch(/^__Host-postern-\d+=v1\./);
    const inside = await visit(`https://${SHARE}/q3`, { headers: { cookie } });
    expect(inside.status).toBe(200);
    expect(backendSaw(inside).headers['x-postern-user']).toBe('share:Bob');
    await system.api.call(operations.revokeShareLink, { params: { ...shareService, linkId: link.id } });
    expect((await visit(`https://${SHARE}/q3`, { headers: { cookie, accept: '*/*' } })).status).toBe(401);
    const again = await visit(link.url);
    expect(again.status).toBe(410);
    expect(again.body).toContain('This link was revoked');
  });

  it('refuses a password after 5 wrong tries from one address', async () => {
    const sourceIp = system.topology.clientIps[1];
    const post = (password: string) =>
      visit(`https://${PW}/_postern/access/password`, {
        form: { s: String(serviceIds.get(PW) ?? 0), rd: '/', password },
        sourceIp,
      });
    for (let i = 0; i < 5; i++) expect((await post(`guess-${i}`)).status).toBe(401);
    const limited = await post(PIN);
    expect(limited.status).toBe(429);
    expect(limited.body).toContain('Too many wrong passwords from your address');
    // From another address the right password works.
    const right = await visit(`https://${PW}/_postern/access/password`, {
      form: { s: String(serviceIds.get(PW) ?? 0), rd: '/files', password: PIN },
    });
    expect(right.status).toBe(303);
    expect((await visit(`https://${PW}/files`, { headers: { cookie: cookieOf(right) } })).status).toBe(200);
  });

  it('passes an exception path without a session, and nothing that merely starts alike', async () => {
    const hook = await visit(`https://${SSO}/hooks/github`, { form: { payload: '{}' } });
    expect(hook.status).toBe(200);
    expect(backendSaw(hook).url).toBe('/hooks/github');
    for (const path of ['/hooksx', '/hooks/../admin', '/%68ooks-not'])
      expect((await visit(`https://${SSO}${path}`, { headers: { accept: '*/*' } })).status, path).toBe(401);
  });

  it('refuses a cookie taken from one domain on another', async () => {
    const signedIn = await visit(`https://${PW}/_postern/access/password`, {
      form: { s: String(serviceIds.get(PW) ?? 0), rd: '/', password: PIN },
    });
    const cookie = cookieOf(signedIn);
    const value = cookie.slice(cookie.indexOf('=') + 1);
    expect((await visit(`https://${PW}/`, { headers: { cookie } })).status).toBe(200);
    const shareRoute = await visit(`https://${SHARE}/`, { headers: { accept: '*/*' } });
    const shareName = /__Host-postern-\d+/.exec(JSON.stringify(shareRoute.headers))?.[0];
    for (const name of [
      cookie.slice(0, cookie.indexOf('=')),
      shareName ?? '__Host-postern-0',
      '__Host-postern-1',
      '__Host-postern-2',
      '__Host-postern-3',
    ])
      expect(
        (await visit(`https://${SHARE}/`, { headers: { cookie: `${name}=${value}`, accept: '*/*' } })).status,
      ).toBe(401);
  });

  it('refuses return addresses that leave the host, however they are encoded', async () => {
    const s = String(serviceIds.get(PW) ?? 0);
    for (const rd of [
      'https%3A%2F%2Fevil.example',
      'https://evil.example',
      '%2F%2Fevil.example',
      '//evil.example',
      '%2F%5Cevil.example',
      'https:%2F%2Fevil.example',
      '%252F%252Fevil.example',
    ]) {
      const page = await visit(`https://${PW}/_postern/access/sign-in?s=${s}&rd=${rd}`);
      expect(page.status, rd).toBe(400);
      expect(page.headers.location, rd).toBeUndefined();
      const posted = await visit(`https://${PW}/_postern/access/password`, {
        form: { s, rd: decodeURIComponent(rd), password: PIN },
      });
      expect(posted.status, rd).toBe(400);
      expect(posted.headers.location).toBeUndefined();
    }
  });

  it('refuses a WebSocket upgrade and an event stream without a session, before the backend', async () => {
    const upgrade = await visit(`https://${PW}/socket`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    expect(upgrade.status).toBe(401);
    expect(upgrade.body).not.toContain('"label"');
    const stream = await visit(`https://${PW}/trickle`, { headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(401);
  });

  it('strips identity headers and visitor cookies on an unprotected service too', async () => {
    const answer = await visit(`https://${OPEN}/`, {
      headers: {
        'X-Postern-User': 'admin',
        'x-postern-email': 'boss@corp.test',
        'X-Postern-Groups': 'admins',
        cookie: 'theme=dark; __Host-postern-1=forged',
      },
    });
    expect(answer.status).toBe(200);
    const { headers } = backendSaw(answer);
    expect(headers['x-postern-user']).toBeUndefined();
    expect(headers['x-postern-email']).toBeUndefined();
    expect(headers['x-postern-groups']).toBeUndefined();
    expect(headers.cookie).toBe('theme=dark');
  });
  // Signing in to the console through the organisation's provider (docs/api.md "Accounts and roles"): the
  // provider's own pages in Chromium, the console's callback handing the query to the API, as the console page does.
  describe('console sign-in through the provider', () => {
    const CONSOLE_PROVIDER = 'Corp console';
    let consoleProviderId = 0;
    let otherProviderId = 0;

    interface Finished {
      status: number;
      body: { token?: string; message?: string; twoFactorRequired?: boolean };
    }

    /**
     * POST to the console's API from a page on the console's origin (cookies ride along as the console's would),
     * marked with `x-postern-test` so that throughProvider can tell the test's calls from the console page's.
     */
    const post = (page: Page, path: string, body: object) =>
      page.evaluate(
        async ([url, payload]) => {
          const answer = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-postern-test': '1' },
            body: JSON.stringify(payload),
          });
          return { status: answer.status, body: (await answer.json()) as Finished['body'] };
        },
        [path, body] as const,
      );

    /** Starts a sign-in through `providerId` and passes the provider's pages as `login`: the callback's query. */
    async function throughProvider(context: BrowserContext, providerId: number, login: string): Promise<Page> {
      const page = await context.newPage();
      // These tests finish the sign-in themselves through the API. The console's callback page, where the provider
      // sends the browser back, would post the same answer first (a sign-in finishes once): its call is dropped.
      await page.route(
        (url) => url.pathname === '/api/auth/sso/finish',
        (route) => (route.request().headers()['x-postern-test'] ? route.continue() : route.abort()),
      );
      await page.goto(`https://${gatewayIp}/api/health`);
      const started = await post(page, '/api/auth/sso/start', { providerId });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      await page.goto((started.body as { url: string }).url);
      await page.locator('input[name=login]').fill(login);
      await page.locator('input[name=password]').fill('any-password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await expect
        .poll(
          async () => {
            if (new URL(page.url()).pathname === '/login/callback') return true;
            const consent = page.getByRole('button', { name: 'Continue' });
            if ((await consent.count()) > 0) await consent.click().catch(() => undefined);
            return false;
          },
          { timeout: 15_000 },
        )
        .toBe(true);
      return page;
    }

    const finish = (page: Page, query = new URL(page.url()).search): Promise<Finished> =>
      post(page, '/api/auth/sso/finish', { query });

    const accountOf = async (token: string) => {
      const answer = await fetch(`${system.gateway.baseUrl}/api/auth/account`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: answer.status, body: (await answer.json()) as { username: string; role: string; via: string } };
    };
    const accountNames = async () =>
      (await system.api.call(operations.listAccounts, { query: { limit: 100 } })).data.map((a) => a.username);

    beforeAll(async () => {
      // A provider of its own for the console (the visitors' provider stays as the tests above use it), both
      // registered with the same client; the owners let them sign accounts in and map groups to roles.
      const made = await system.api.call(operations.createIdentityProvider, {
        body: {
          name: CONSOLE_PROVIDER,
          issuer: idp.issuer,
          clientId: CLIENT.client_id,
          clientSecret: CLIENT.client_secret,
          scopes: ['openid', 'email', 'profile', 'groups'],
        },
      });
      consoleProviderId = made.id;
      await system.api.call(operations.updateProviderConsoleSignIn, {
        params: { id: made.id },
        body: {
          consoleSignIn: true,
          groupRoles: [
            { group: 'staff', role: 'viewer' },
            { group: 'ops', role: 'operator' },
          ],
        },
      });
      const other = await system.api.call(operations.createIdentityProvider, {
        body: {
          name: 'Elsewhere IdP',
          issuer: otherIdp.issuer,
          clientId: CLIENT.client_id,
          clientSecret: CLIENT.client_secret,
          scopes: ['openid', 'email', 'profile', 'groups'],
        },
      });
      otherProviderId = other.id;
      await system.api.call(operations.updateProviderConsoleSignIn, {
        params: { id: other.id },
        body: { consoleSignIn: true, groupRoles: [{ group: 'ops', role: 'admin' }] },
      });
    });

    it('makes a member of a mapped group an account of the highest mapped role on the first sign-in', async () => {
      const context = await browser.newContext();
      const page = await throughProvider(context, consoleProviderId, 'alice');
      const finished = await finish(page);
      expect(finished.status, JSON.stringify(finished.body)).toBe(200);
      const me = await accountOf(finished.body.token ?? '');
      expect(me.body).toMatchObject({
        username: 'alice@corp.test',
        role: 'operator',
        via: `single sign-on (${CONSOLE_PROVIDER})`,
      });
      // An operator: no settings.
      const settings = await fetch(`${system.gateway.baseUrl}/api/access/providers/${consoleProviderId}/console`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${finished.body.token ?? ''}`, 'content-type': 'application/json' },
        body: JSON.stringify({ consoleSignIn: false }),
      });
      expect(settings.status).toBe(403);
      // Made through the provider: no password of its own signs it in.
      const byPassword = await fetch(`${system.gateway.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'alice@corp.test', password: 'any-password' }),
      });
      expect(byPassword.status).toBe(401);
      const audit = await system.api.call(operations.listAudit, { query: { action: 'account.create' } });
      expect(audit.data[0]).toMatchObject({
        actor: { name: 'alice@corp.test', via: `single sign-on (${CONSOLE_PROVIDER})` },
      });
      await context.close();
    });

    it('makes no account for an unverified email or someone in no mapped group', async () => {
      for (const [login, message] of [
        ['mallory', /not verified/],
        ['eve', /No console account is bound/],
      ] as const) {
        const context = await browser.newContext();
        const finished = await finish(await throughProvider(context, consoleProviderId, login));
        expect(finished.status, login).toBe(403);
        expect(finished.body.message, login).toMatch(message);
        await context.close();
      }
      const names = await accountNames();
      expect(names).not.toContain('mallory@corp.test');
      expect(names).not.toContain('eve@evil.test');
    });

    it('signs in once per provider redirect: a replayed callback, or one of another browser, signs nobody in', async () => {
      const context = await browser.newContext();
      const page = await throughProvider(context, consoleProviderId, 'alice');
      const query = new URL(page.url()).search;
      const stateCookies = (await context.cookies()).filter((c) => c.name.includes('postern-sso'));
      expect(stateCookies).toHaveLength(1);
      // Another browser (no state of its own, or another sign-in's) cannot finish this one.
      const intruder = await browser.newContext();
      const theirs = await throughProvider(intruder, consoleProviderId, 'bob');
      const swapped = await finish(theirs, query);
      expect(swapped.status).toBe(401);
      const first = await finish(page, query);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      // The same answer again: the state cookie is gone; put back, the code is spent at the provider.
      expect((await finish(page, query)).status).toBe(401);
      await context.addCookies(stateCookies);
      const replayed = await finish(page, query);
      expect(replayed.status).toBe(401);
      expect(replayed.body.token).toBeUndefined();
      await context.close();
      await intruder.close();
    });

    it("never lets another issuer's subject in as the account bound to this one", async () => {
      expect(await accountNames()).toContain('alice@corp.test');
      // alice at the other provider has the same subject and is in a group it maps: still not the bound account.
      // A browser each: the providers remember who signed in, and this is about who the provider says it is.
      const contexts = [await browser.newContext(), await browser.newContext(), await browser.newContext()];
      const [first, second, third] = contexts as [BrowserContext, BrowserContext, BrowserContext];
      const elsewhere = await finish(await throughProvider(first, otherProviderId, 'alice'));
      expect(elsewhere.status).toBe(403);
      expect(elsewhere.body.message).toMatch(/exists but is not bound/);
      // Nor when an owner points the bound provider at the other issuer: the issuer bound with the account counts.
      await system.api.call(operations.updateIdentityProvider, {
        params: { id: consoleProviderId },
        body: { issuer: otherIdp.issuer },
      });
      try {
        const moved = await finish(await throughProvider(second, consoleProviderId, 'alice'));
        expect(moved.status).toBe(403);
        expect(moved.body.token).toBeUndefined();
      } finally {
        await system.api.call(operations.updateIdentityProvider, {
          params: { id: consoleProviderId },
          body: { issuer: idp.issuer },
        });
      }
      // The real alice still signs in.
      const back = await finish(await throughProvider(third, consoleProviderId, 'alice'));
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect((await accountOf(back.body.token ?? '')).body.username).toBe('alice@corp.test');
      for (const context of contexts) await context.close();
    });
  });
});
