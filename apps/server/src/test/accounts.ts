import { expect } from 'vitest';
import type { Account, CurrentAccount, Role } from '@postern/contract';
import type { TestApp } from './build-test-app.js';

// Requests as a given account, and accounts made the way people get them (an invite, accepted, then a sign-in): what
// the adversarial tests of accounts and node scopes share.

export interface Answer<T> {
  status: number;
  body: T;
}

/** One request through `app.inject` with `token` as the bearer (null: none): the status and the parsed body. */
export async function callAs<T>(
  t: TestApp,
  method: string,
  url: string,
  token: string | null,
  body?: object,
): Promise<Answer<T>> {
  const response = await t.app.inject({
    method: method as 'POST',
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(body ? { payload: body } : {}),
  });
  return { status: response.statusCode, body: (response.body ? response.json() : null) as T };
}

/** The token of an invite link (what follows the `#`). */
export const inviteToken = (url: string): string => url.slice(url.indexOf('#') + 1);

/**
 * An account of `role` made through an invite from `owner`'s session, limited to `nodes` if given (before it signs
 * in: a narrowing ends sessions), signed in: its id and session.
 */
export async function inviteAccount(
  t: TestApp,
  owner: string,
  account: { username: string; password: string; role: Role; nodes?: number[] | undefined },
): Promise<{ id: number; session: string }> {
  const { username, password, role, nodes } = account;
  const invite = await callAs<{ url: string }>(t, 'POST', '/api/invites', owner, { username, role });
  expect(invite.status).toBe(201);
  const token = inviteToken(invite.body.url);
  expect((await callAs(t, 'POST', '/api/auth/invite/accept', null, { token, password })).status).toBe(201);
  if (nodes) {
    const accounts = await callAs<{ data: Account[] }>(t, 'GET', '/api/accounts?limit=100', owner);
    const id = accounts.body.data.find((a) => a.username === username)?.id;
    const set = await callAs<Account>(t, 'PATCH', `/api/accounts/${String(id)}`, owner, { nodes });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.nodes).toEqual(nodes);
  }
  const login = await callAs<{ token: string }>(t, 'POST', '/api/auth/login', null, { username, password });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  const me = await callAs<CurrentAccount>(t, 'GET', '/api/auth/account', login.body.token);
  return { id: me.body.id, session: login.body.token };
}
