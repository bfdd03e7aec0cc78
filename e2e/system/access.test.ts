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
      idp = await startOidcProvider(lab, host.ns, host.publicIp, [
        { ...CLIENT, redirect_uris: [`https://${SSO}/_postern/access/callback`] },
      ]);
      // The gateway trusts the provider's test CA, as it would a public one.
      return { NODE_EXTRA_CA_CERTS: idp.caFile };
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
});
