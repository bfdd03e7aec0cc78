import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountMessages, type Account, type AuditEntry, type CurrentAccount, type Role } from '@postern/contract';
import { TOKEN_MAX_FAILURES_PER_CLIENT } from '../modules/auth/routes.js';
import {
  ACCOUNT_DISABLED_MESSAGE,
  INVALID_CREDENTIALS_MESSAGE,
  TOO_MANY_ATTEMPTS_MESSAGE,
} from '../modules/auth/service.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';
import { callAs, inviteAccount, inviteToken as tokenOf } from '../test/accounts.js';
import { connectSse } from '../test/sse-client.js';

// Several operators (docs/api.md "Accounts and roles"): invites, the last owner, sessions that end with a
// change of their account, and the audit log naming the person. The route × role matrix is in auth.test.ts. One app
// for the whole file, its clock movable (invite expiry); every test makes accounts of its own names.

let t: TestApp;
let base: string;
let owner: string;
let clockOffsetMs = 0;
let names = 0;

beforeAll(async () => {
  t = await buildTestApp({ now: () => new Date(Date.now() + clockOffsetMs) });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  owner = await t.login();
});
afterAll(() => t.cleanup());

const call = <T = unknown>(method: string, url: string, token: string | null, body?: object) =>
  callAs<T>(t, method, url, token, body);

/** An account of `role` made through an invite, signed in: its id, name and session. */
async function account(role: Role): Promise<{ id: number; username: string; password: string; session: string }> {
  const username = `person-${++names}@example.test`;
  const password = `password-of-${names}`;
  return { username, password, ...(await inviteAccount(t, owner, { username, password, role })) };
}

const accountsList = async (): Promise<Account[]> =>
  (await call<{ data: Account[] }>('GET', '/api/accounts?limit=100', owner)).body.data;

describe('the bootstrap admin', () => {
  it('is an owner, signed in with its password as before', async () => {
    const me = await call<CurrentAccount>('GET', '/api/auth/account', owner);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: TEST_ADMIN.username, role: 'owner', via: 'password' });
    expect(me.body.permissions).toContain('accounts');
  });
});

describe('invites', () => {
  it('make an account of the role the owner named; the link works once, and never after it expires or is revoked', async () => {
    const invite = await call<{ id: number; url: string; state: string }>('POST', '/api/invites', owner, {
      username: 'Newcomer@Example.test',
      role: 'operator',
    });
    expect(invite.status).toBe(201);
    expect(invite.body.state).toBe('pending');
    // The token rides in the fragment: it reaches neither a log nor a Referer header.
    expect(invite.body.url).toMatch(/\/invite#[A-Za-z0-9_-]{43}$/);
    const listed = await call<{ data: object[] }>('GET', '/api/invites', owner);
    expect(JSON.stringify(listed.body)).not.toContain(tokenOf(invite.body.url));

    const token = tokenOf(invite.body.url);
    expect((await call('POST', '/api/auth/invite', null, { token })).body).toMatchObject({
      username: 'newcomer@example.test',
      role: 'operator',
    });
    const accepted = await call('POST', '/api/auth/invite/accept', null, { token, password: 'a-long-password' });
    expect(accepted.status).toBe(201);
    // Taken: a second use makes nothing, whatever password it brings.
    const again = await call<{ message: string }>('POST', '/api/auth/invite/accept', null, {
      token,
      password: 'another-long-password',
    });
    expect(again).toEqual({
      status: 400,
      body: { code: 'bad_request', message: accountMessages.inviteInvalid, messageCode: 'invite_invalid' },
    });
    expect((await accountsList()).filter((a) => a.username === 'newcomer@example.test')).toHaveLength(1);
    const login = await call<{ token: string }>('POST', '/api/auth/login', null, {
      username: 'newcomer@example.test',
      password: 'another-long-password',
    });
    expect(login.status).toBe(401);

    const expiring = await call<{ url: string }>('POST', '/api/invites', owner, {
      username: 'late@example.test',
      role: 'admin',
      ttl: 600,
    });
    const revoked = await call<{ id: number; url: string }>('POST', '/api/invites', owner, {
      username: 'revoked@example.test',
      role: 'admin',
    });
    expect((await call('DELETE', `/api/invites/${revoked.body.id}`, owner)).status).toBe(204);
    clockOffsetMs = 601_000;
    try {
      const late = await call('POST', '/api/auth/invite/accept', null, {
        token: tokenOf(expiring.body.url),
        password: 'a-long-password',
      });
      expect(late).toEqual({
        status: 400,
        body: { code: 'bad_request', message: accountMessages.inviteExpired, messageCode: 'invite_expired' },
      });
    } finally {
      clockOffsetMs = 0;
    }
    const gone = await call('POST', '/api/auth/invite/accept', null, {
      token: tokenOf(revoked.body.url),
      password: 'a-long-password',
    });
    expect(gone).toEqual({
      status: 400,
      body: { code: 'bad_request', message: accountMessages.inviteInvalid, messageCode: 'invite_invalid' },
    });
    const usernames = (await accountsList()).map((a) => a.username);
    expect(usernames).not.toContain('late@example.test');
    expect(usernames).not.toContain('revoked@example.test');
  });

  it('cannot take a name an account has, in any case', async () => {
    const taken = await call<{ errors: { body: { field: string }[] } }>('POST', '/api/invites', owner, {
      username: TEST_ADMIN.username.toUpperCase(),
      role: 'viewer',
    });
    expect(taken.status).toBe(422);
    expect(taken.body.errors.body[0]?.field).toBe('username');
  });
});

describe('guessing a token that signs in', () => {
  // Each route's guesses come from an address of its own: the limiter counts per client.
  const from = (remoteAddress: string, url: string, payload: object) =>
    t.app.inject({ method: 'POST', url, payload, remoteAddress });

  it.each([
    ['an invite link (its page)', '/api/auth/invite', { token: 'guessed-token' }, 400, '198.51.100.41'],
    [
      'an invite link (taking it)',
      '/api/auth/invite/accept',
      { token: 'guessed', password: 'a-long-enough-password' },
      400,
      '198.51.100.42',
    ],
    [
      "a provider's redirect back",
      '/api/auth/sso/finish',
      { query: '?code=guessed&state=guessed' },
      401,
      '198.51.100.43',
    ],
  ])(
    'of %s is refused with 429 after a few failures from that client only, its password sign-in untouched',
    async (_, url, body, failed, address) => {
      for (let i = 0; i < TOKEN_MAX_FAILURES_PER_CLIENT; i++)
        expect((await from(address, url, body)).statusCode).toBe(failed);
      const refused = await from(address, url, body);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ message: TOO_MANY_ATTEMPTS_MESSAGE });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Another client is not refused; the guesser's own password sign-in has its own budget.
      expect((await from('198.51.100.49', url, body)).statusCode).toBe(failed);
      expect((await from(address, '/api/auth/login', TEST_ADMIN)).statusCode).toBe(200);
    },
  );

  it('a valid invite link stays usable, and its use forgets no earlier failure', async () => {
    const address = '198.51.100.44';
    const invite = await call<{ url: string }>('POST', '/api/invites', owner, {
      username: 'guarded@example.test',
      role: 'viewer',
    });
    const token = tokenOf(invite.body.url);
    for (let i = 0; i < TOKEN_MAX_FAILURES_PER_CLIENT - 1; i++)
      expect((await from(address, '/api/auth/invite', { token: `${token}x` })).statusCode).toBe(400);
    expect((await from(address, '/api/auth/invite', { token })).statusCode).toBe(200);
    expect((await from(address, '/api/auth/invite/accept', { token, password: 'a-long-password' })).statusCode).toBe(
      201,
    );
    expect((await from(address, '/api/auth/invite', { token: `${token}x` })).statusCode).toBe(400);
    expect((await from(address, '/api/auth/invite', { token: `${token}x` })).statusCode).toBe(429);
  });
});

describe('the last owner', () => {
  it('can be neither demoted, disabled nor deleted; with a second owner it can', async () => {
    const me = await call<CurrentAccount>('GET', '/api/auth/account', owner);
    const ownId = me.body.id;
    // Alone: the bootstrap owner cannot demote itself.
    const demoteSelf = await call('PATCH', `/api/accounts/${ownId}`, owner, { role: 'admin' });
    expect(demoteSelf).toEqual({
      status: 400,
      body: { code: 'bad_request', message: accountMessages.lastOwner, messageCode: 'last_owner' },
    });

    const second = await account('admin');
    expect((await call('PATCH', `/api/accounts/${second.id}`, owner, { role: 'owner' })).status).toBe(200);
    // The second owner, disabled, does not count: the first still cannot step down.
    expect((await call('PATCH', `/api/accounts/${second.id}`, owner, { enabled: false })).status).toBe(200);
    expect((await call('PATCH', `/api/accounts/${ownId}`, owner, { role: 'viewer' })).status).toBe(400);
    expect((await call('PATCH', `/api/accounts/${second.id}`, owner, { enabled: true })).status).toBe(200);
    const secondSession = (
      await call<{ token: string }>('POST', '/api/auth/login', null, {
        username: second.username,
        password: second.password,
      })
    ).body.token;

    // Two owners: each may act on the other; the one left alone is protected again.
    expect((await call('PATCH', `/api/accounts/${second.id}`, owner, { role: 'operator' })).status).toBe(200);
    expect((await call('PATCH', `/api/accounts/${ownId}`, owner, { role: 'owner' })).status).toBe(200);
    const lastDelete = await call('DELETE', `/api/accounts/${ownId}`, owner);
    expect(lastDelete.status).toBe(400);
    const roles = Object.fromEntries((await accountsList()).map((a) => [a.id, a.role]));
    expect(roles[ownId]).toBe('owner');
    expect(roles[second.id]).toBe('operator');
    // The demoted second owner's session ended with the change.
    expect((await call('GET', '/api/nodes', secondSession)).status).toBe(401);
  });
});

describe('sessions of a changed account', () => {
  it('end at once when it is demoted, disabled or deleted, event streams included; a promotion counts at once', async () => {
    const person = await account('operator');
    const openStream = async (session: string) => {
      const stream = await connectSse(`${base}/api/audit/stream?token=${session}`);
      expect(stream.status).toBe(200);
      let ended = false;
      stream.onEnd(() => (ended = true));
      return { stream, isEnded: () => ended };
    };
    /** Polls until the server ended the stream (the server promises 1 s; the deadline is generous for load). */
    const ends = async (probe: { isEnded: () => boolean }) => {
      const deadline = Date.now() + 5_000;
      while (!probe.isEnded() && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 20));
      return probe.isEnded();
    };

    // Demoted: operator → viewer.
    let probe = await openStream(person.session);
    expect((await call('PATCH', `/api/accounts/${person.id}`, owner, { role: 'viewer' })).status).toBe(200);
    expect((await call('GET', '/api/nodes', person.session)).status).toBe(401);
    expect(await ends(probe)).toBe(true);
    probe.stream.close();

    // Signed in again as a viewer: read yes, write no.
    let session = (
      await call<{ token: string }>('POST', '/api/auth/login', null, {
        username: person.username,
        password: person.password,
      })
    ).body.token;
    expect((await call('GET', '/api/nodes', session)).status).toBe(200);
    expect((await call('POST', '/api/nodes', session, { name: `by-viewer-${names}` })).status).toBe(403);
    // Promoted back: the same session may write from its next request.
    expect((await call('PATCH', `/api/accounts/${person.id}`, owner, { role: 'operator' })).status).toBe(200);
    expect((await call('POST', '/api/nodes', session, { name: `by-operator-${names}` })).status).toBe(201);

    // Disabled: the session and its stream end; the right password then says why, a wrong one says nothing.
    probe = await openStream(session);
    expect((await call('PATCH', `/api/accounts/${person.id}`, owner, { enabled: false })).status).toBe(200);
    expect((await call('GET', '/api/nodes', session)).status).toBe(401);
    expect(await ends(probe)).toBe(true);
    probe.stream.close();
    expect(
      await call('POST', '/api/auth/login', null, { username: person.username, password: person.password }),
    ).toEqual({
      status: 403,
      body: { code: 'forbidden', message: ACCOUNT_DISABLED_MESSAGE, messageCode: 'account_disabled' },
    });
    expect(
      await call('POST', '/api/auth/login', null, { username: person.username, password: 'wrong-password' }),
    ).toEqual({
      status: 401,
      body: { code: 'unauthorized', message: INVALID_CREDENTIALS_MESSAGE, messageCode: 'invalid_credentials' },
    });

    // Enabled and deleted: gone at once as well.
    expect((await call('PATCH', `/api/accounts/${person.id}`, owner, { enabled: true })).status).toBe(200);
    session = (
      await call<{ token: string }>('POST', '/api/auth/login', null, {
        username: person.username,
        password: person.password,
      })
    ).body.token;
    probe = await openStream(session);
    expect((await call('DELETE', `/api/accounts/${person.id}`, owner)).status).toBe(204);
    expect((await call('GET', '/api/nodes', session)).status).toBe(401);
    expect(await ends(probe)).toBe(true);
    probe.stream.close();
  });

  it('an account cannot disable or delete itself (another owner does)', async () => {
    const me = await call<CurrentAccount>('GET', '/api/auth/account', owner);
    for (const [method, body] of [
      ['PATCH', { enabled: false }],
      ['DELETE', undefined],
    ] as const) {
      const answer = await call(method, `/api/accounts/${me.body.id}`, owner, body);
      expect(answer).toEqual({
        status: 400,
        body: { code: 'bad_request', message: accountMessages.ownAccount, messageCode: 'own_account' },
      });
    }
    expect((await call('GET', '/api/nodes', owner)).status).toBe(200);
  });
});

describe('the audit log', () => {
  it('names the account that acted and how it signed in, and filters by person', async () => {
    const person = await account('operator');
    const node = await call<{ id: number }>('POST', '/api/nodes', person.session, { name: `audited-${names}` });
    expect(node.status).toBe(201);
    await call('POST', '/api/nodes', owner, { name: `by-owner-${names}` });
    const theirs = await call<{ data: AuditEntry[] }>('GET', `/api/audit?account=${person.id}`, owner);
    expect(theirs.status).toBe(200);
    const created = theirs.body.data.find((e) => e.action === 'node.create');
    expect(created?.actor).toEqual({
      kind: 'admin',
      name: person.username,
      tokenId: null,
      accountId: person.id,
      via: 'password',
    });
    expect(created?.target?.id).toBe(node.body.id);
    expect(theirs.body.data.every((e) => e.actor.accountId === person.id)).toBe(true);
    expect(theirs.body.data.some((e) => e.action === 'auth.sign-in')).toBe(true);
    // The owners' changes of accounts are recorded as theirs.
    expect((await call('PATCH', `/api/accounts/${person.id}`, owner, { role: 'viewer' })).status).toBe(200);
    const me = await call<CurrentAccount>('GET', '/api/auth/account', owner);
    const ownerEntries = await call<{ data: AuditEntry[] }>('GET', `/api/audit?account=${me.body.id}`, owner);
    const update = ownerEntries.body.data.find((e) => e.action === 'account.update' && e.target?.id === person.id);
    expect(update?.before).toMatchObject({ role: 'operator' });
    expect(update?.after).toMatchObject({ role: 'viewer' });
  });
});
