import type { AppDeps } from '../../deps.js';
import type { AuditActor } from '../audit/recorder.js';

// What sign-in and the re-checks of the password record in the audit log (docs/api.md "Audit log"). Sign-ins and
// changes of the second factor are written as they happen (each needs the password and a code, or a session).
// Failures and refusals, and accepted passwords still waiting for their second factor, can be caused by any client
// as often as it likes: they go through `audit.recordSummed`, which writes the first per client and window at once
// and sums up the rest, so a flood costs a bounded number of rows and write transactions.

/** The client of a request, as the auth services see it (a Fastify request is one). */
export interface Client {
  /** request.ip: the X-Forwarded-For client behind a trusted proxy. */
  ip: string;
  log: { error(object: object, message: string): void };
}

/** A user the request concerns (the one signing in, or the session's). */
export interface Who {
  id?: number;
  username: string;
}

/** The account as the actor of an entry: the person (id and name) and how its session signed in. */
export const accountActor = (who: Who, via: string | null = null): AuditActor => ({
  kind: 'admin',
  name: who.username,
  accountId: who.id ?? null,
  via,
});

/** Where a signed-in admin's password (or a code) was asked again. */
export type Recheck = 'password change' | 'two-factor setup' | 'two-factor disable' | 'identity link';

/** The audit log must never fail the request it records (its database may be what failed). */
async function safely(client: Client, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    client.log.error({ err: error }, 'audit log: the entry could not be recorded');
  }
}

const userTarget = (who: Who) => ({ type: 'user', id: who.id ?? null, name: who.username.slice(0, 64) });

/** A sign-in step refused: wrong password or code, or the client (or account) is rate limited. */
export function signInFailed(deps: AppDeps, client: Client, who: Who, reason: string): Promise<void> {
  return safely(client, () =>
    deps.audit.recordSummed({
      actor: { kind: 'anonymous', name: who.username.slice(0, 64) },
      address: client.ip,
      action: 'auth.sign-in-failed',
      target: userTarget(who),
      reason,
    }),
  );
}

/** A signed-in account's re-check of the password or a code failed (or was refused by the limits). */
export function recheckFailed(deps: AppDeps, client: Client, who: Who, where: Recheck, reason: string): Promise<void> {
  return safely(client, () =>
    deps.audit.recordSummed({
      actor: accountActor(who),
      address: client.ip,
      action: 'auth.recheck-failed',
      target: userTarget(who),
      reason: `${where}: ${reason}`,
    }),
  );
}

/** The password was right and the second factor is asked for: nobody is signed in yet. */
export function passwordAccepted(deps: AppDeps, client: Client, who: Who): Promise<void> {
  return safely(client, () =>
    deps.audit.recordSummed({
      actor: accountActor(who),
      address: client.ip,
      action: 'auth.password-accepted',
      target: userTarget(who),
      reason: 'second factor required',
    }),
  );
}

/**
 * An event of an account's own: signed in (with the password alone, through a provider, and with a second factor),
 * two-factor turned on or off. `via`: how the (new) session signed in.
 */
export function authEvent(
  deps: AppDeps,
  client: Client,
  who: Who,
  event: 'password' | 'totp' | 'recovery' | 'sso' | 'two-factor-enabled' | 'two-factor-disabled',
  via: string | null,
): Promise<void> {
  const actions = {
    password: ['auth.sign-in', null],
    totp: ['auth.sign-in', 'with an authentication code'],
    recovery: ['auth.sign-in', 'with a recovery code'],
    sso: ['auth.sign-in', via],
    'two-factor-enabled': ['auth.two-factor-enabled', null],
    'two-factor-disabled': ['auth.two-factor-disabled', null],
  } as const;
  const [action, detail] = actions[event];
  return safely(client, () =>
    deps.audit.record({
      actor: accountActor(who, via),
      address: client.ip,
      action,
      target: userTarget(who),
      detail,
    }),
  );
}
