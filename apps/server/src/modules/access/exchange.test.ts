import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACCESS_KEY_ID, accessCookieKey } from '../../db/access-state.js';
import { accessSessions } from '../../db/schema.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../../test/build-test-app.js';
import { verifyAccessCookie } from './cookie.js';

// The visitors' sign-in exchange (docs/ACCESS.md) as nginx hands it to the control plane: Host is the protected host,
// X-Forwarded-For the visitor. Pages, cookies, redirects that never leave the host, limits, share links, sign-out.

let t: TestApp;
let admin: string;
let nodeId: number;
let serviceId: number;
let domainId: number;
const HOST = 'app.example.test';
const ORIGIN = `https://${HOST}`;

async function api(method: NonNullable<InjectOptions['method']>, url: string, payload?: object) {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${admin}` },
    ...(payload ? { payload } : {}),
  });
  return response.json<Record<string, unknown>>();
}

const visit = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { host: HOST, 'x-forwarded-for': '203.0.113.7', ...headers } });

const postForm = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: {
      host: HOST,
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': '203.0.113.7',
      ...headers,
    },
    payload: new URLSearchParams(form).toString(),
  });

function setCookieOf(response: { headers: Record<string, unknown> }): string[] {
  const header = response.headers['set-cookie'];
  return Array.isArray(header) ? (header as string[]) : typeof header === 'string' ? [header] : [];
}

beforeEach(async () => {
  t = await buildTestApp();
  admin = await t.login();
  nodeId = (await api('POST', '/api/nodes', { name: 'n' })).id as number;
  serviceId = (
    await api('POST', `/api/services/${nodeId}/http`, { name: 'Grafana', domain: HOST, pathLocation: '/grafana' })
  ).id as number;
  domainId = ((await api('GET', `/api/domains?search=${HOST}`)).data as { id: number }[])[0]?.id ?? 0;
  await api('PATCH', `/api/domains/${domainId}/access`, {
    mode: 'protected',
    password: 'open-sesame',
    shareLinks: true,
  });
});
afterEach(() => t.cleanup());

describe('the sign-in page', () => {
  it('names the service it protects, on its host only', async () => {
    const page = await visit(`/_postern/access/sign-in?s=${serviceId}&rd=%2Fgrafana%2Fd%2F1`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<h1>Grafana</h1>');
    expect(page.body).toContain('name="password"');
    expect(page.body).toContain('value="/grafana/d/1"');
    expect(page.body).not.toMatch(/<script/i);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    // The console's host and a host with nothing protected have no sign-in.
    expect((await visit(`/_postern/access/sign-in?s=${serviceId}`, { host: 'gateway.test' })).statusCode).toBe(404);
    expect((await visit('/_postern/access/sign-in', { host: 'elsewhere.example.test' })).statusCode).toBe(404);
    expect((await visit('/_postern/access/style.css')).headers['content-type']).toMatch(/^text\/css/);
  });

  it('refuses every return address that leaves the host, however it is encoded', async () => {
    for (const rd of [
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      '%2F%2Fevil.example',
      'https:%2F%2Fevil.example',
      '%252F%252Fevil.example',
      '/%0d%0aSet-Cookie:x=1',
      'javascript:alert(1)',
    ]) {
      const raw = rd.includes('%') ? rd : encodeURIComponent(rd);
      for (const url of [
        `/_postern/access/sign-in?s=${serviceId}&rd=${raw}`,
        `/_postern/access/oidc?s=${serviceId}&rd=${raw}`,
      ]) {
        const answer = await visit(url);
        expect([400, 404], url).toContain(answer.statusCode);
        expect(answer.headers.location, url).toBeUndefined();
      }
      const posted = await postForm('/_postern/access/password', {
        s: String(serviceId),
        rd: decodeURIComponent(raw),
        password: 'open-sesame',
      });
      expect(posted.statusCode, rd).toBe(400);
      expect(posted.headers.location).toBeUndefined();
      expect(setCookieOf(posted)).toEqual([]);
    }
  });
});

describe('a password', () => {
  it('lets in with a host-bound, HttpOnly, Secure cookie and sends the visitor back on the same host', async () => {
    const wrong = await postForm('/_postern/access/password', {
      s: String(serviceId),
      rd: '/grafana/x',
      password: 'nope',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('That password is not right.');
    expect(setCookieOf(wrong)).toEqual([]);
    const right = await postForm('/_postern/access/password', {
      s: String(serviceId),
      rd: '/grafana/x?y=1',
      password: 'open-sesame',
    });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe(`${ORIGIN}/grafana/x?y=1`);
    const [cookie] = setCookieOf(right);
    expect(cookie).toMatch(/^__Host-postern-\d+=v1\.1\.[^;]+; Max-Age=86400; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    const value = cookie?.split(';')[0]?.split('=')[1] ?? '';
    const key = accessCookieKey(t.deps.secrets);
    expect(verifyAccessCookie(key, ACCESS_KEY_ID, HOST, value)).toMatchObject({ e: 1 });
    expect(verifyAccessCookie(key, ACCESS_KEY_ID, 'other.example.test', value)).toBeNull();
    const audit = (await api('GET', '/api/audit?action=access')).data as { action: string; detail: string }[];
    expect(audit.map((e) => `${e.action} ${e.detail}`)).toEqual(
      expect.arrayContaining(['access.sign-in password', 'access.sign-in-failed wrong password']),
    );
  });

  it('refuses after 5 wrong tries from one address, counted apart from the console sign-in', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await postForm('/_postern/access/password', { s: String(serviceId), password: `guess-${i}` });
      expect(wrong.statusCode).toBe(401);
    }
    const limited = await postForm('/_postern/access/password', { s: String(serviceId), password: 'open-sesame' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.body).toMatch(/Too many wrong passwords from your address/);
    // Another visitor is not held back, and the operator at the same address still signs in to the console.
    const other = await postForm(
      '/_postern/access/password',
      { s: String(serviceId), password: 'open-sesame' },
      { 'x-forwarded-for': '198.51.100.9' },
    );
    expect(other.statusCode).toBe(303);
    const console = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'x-forwarded-for': '203.0.113.7' },
      payload: TEST_ADMIN,
    });
    expect(console.statusCode).toBe(200);
  });

  it('cannot fill the audit log: a flood from one address is one row now and one summary later', async () => {
    for (let i = 0; i < 12; i++)
      await postForm('/_postern/access/password', { s: String(serviceId), password: `x-${i}` });
    const rows = async () =>
      ((await api('GET', '/api/audit?action=access.sign-in-failed')).data as { detail: string | null }[]).length;
    expect(await rows()).toBe(1);
    await t.deps.audit.flushSummed();
    expect(await rows()).toBe(2);
  });

  it('refuses a form sent from another site', async () => {
    for (const headers of [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    ]) {
      const answer = await postForm(
        '/_postern/access/password',
        { s: String(serviceId), password: 'open-sesame' },
        headers,
      );
      expect(answer.statusCode).toBe(403);
      expect(setCookieOf(answer)).toEqual([]);
    }
    // What a browser sends from the page itself (its Origin is "null" under Referrer-Policy: no-referrer).
    const own = await postForm(
      '/_postern/access/password',
      { s: String(serviceId), password: 'open-sesame' },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(own.statusCode).toBe(303);
  });
});

describe('share links', () => {
  it('are exchanged for a cookie at once and redirect to an address without the token, until revoked', async () => {
    const link = await api('POST', `/api/services/${nodeId}/http/${serviceId}/share-links`, {
      name: 'Bob',
      pathPrefix: '/grafana/d',
    });
    const url = new URL(link.url as string);
    const used = await visit(`${url.pathname}${url.search}`);
    expect(used.statusCode).toBe(302);
    expect(used.headers.location).toBe(`${ORIGIN}/grafana/d`);
    const value = setCookieOf(used)[0]?.split(';')[0]?.split('=')[1] ?? '';
    expect(verifyAccessCookie(accessCookieKey(t.deps.secrets), ACCESS_KEY_ID, HOST, value)).toMatchObject({
      a: '/grafana/d',
      u: 'share:Bob',
    });
    expect((await api('GET', `/api/services/${nodeId}/http/${serviceId}/share-links`)).data).toMatchObject([
      { uses: 1 },
    ]);
    await api('PATCH', `/api/services/${nodeId}/http/${serviceId}/share-links/${link.id as number}/revoke`);
    const again = await visit(`${url.pathname}${url.search}`);
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This link was revoked');
    // The session it made is revoked too, and nginx is told.
    const [row] = await t.db
      .select()
      .from(accessSessions)
      .where(eq(accessSessions.shareLinkId, link.id as number));
    expect(row?.revokedAt).not.toBeNull();
    expect(t.fakeDataPlane.proxy.access.revoked.has(row?.sid ?? '')).toBe(true);
    expect((await visit('/_postern/access/share?token=not-a-token')).statusCode).toBe(404);
  });
});

describe('sign-out', () => {
  it("revokes the sessions of the host's cookies and clears them", async () => {
    const signedIn = await postForm('/_postern/access/password', { s: String(serviceId), password: 'open-sesame' });
    const cookie = setCookieOf(signedIn)[0]?.split(';')[0] ?? '';
    expect((await visit('/_postern/access/sign-out')).body).toContain('End your session');
    const out = await t.app.inject({
      method: 'POST',
      url: '/_postern/access/sign-out',
      headers: { host: HOST, cookie: `theme=dark; ${cookie}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(out.statusCode).toBe(200);
    expect(out.body).toContain('You are signed out');
    expect(setCookieOf(out)[0]).toMatch(/^__Host-postern-\d+=; Max-Age=0; Path=\//);
    const sid = verifyAccessCookie(accessCookieKey(t.deps.secrets), ACCESS_KEY_ID, HOST, cookie.split('=')[1] ?? '')?.s;
    expect(t.fakeDataPlane.proxy.access.revoked.has(sid ?? '')).toBe(true);
  });
});
