import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import { createChallengeStore } from './challenges.js';
import { createHashGate } from './hash-gate.js';
import { clientKeyOf, createLoginLimiter, type LoginAttempt } from './rate-limit.js';
import { changePassword, claimAttempt, hashGated, logIn, type PasswordChecks } from './service.js';
import { acceptInvite, inviteInfo } from '../accounts/invites.js';
import { currentAccount } from '../accounts/service.js';
import { listConsoleProviders } from '../access/providers.js';
import { accountActor, signInFailed, type Client } from './auth-audit.js';
import { hashPassword } from './passwords.js';
import {
  clearSessionCookie,
  clearSsoStateCookie,
  readSessionCookies,
  readSsoStateCookie,
  setSessionCookie,
  setSsoStateCookie,
  upgradeSessionCookie,
} from './session-cookie.js';
import type { SessionStreams } from './session-streams.js';
import { deleteOtherSessions, deleteSession, sessionSecondsLeft, verifySessionToken } from './sessions.js';
import { finishSso, SSO_STATE_SECONDS, startIdentityLink, startSso } from './sso.js';
import { registerCookies } from '../../http/cookies.js';
import {
  disableTwoFactor,
  enableTwoFactor,
  logInSecondFactor,
  startTwoFactorSetup,
  twoFactorStatus,
} from './two-factor.js';

/**
 * Sign-in bodies are two short strings (username ≤ 64, password ≤ 256 characters, ≤ 3.1 KB even fully
 * \u-escaped): anything larger is refused with 413 from its Content-Length, before it is read or parsed.
 */
export const PASSWORD_BODY_LIMIT = 4096;

/** Planted look-alikes are tried too (see readSessionCookies), but only a few: each costs a signature check. */
const MAX_SESSION_COOKIES = 5;

/**
 * Only the console's own pages may ask for the session: a page on another port of the same host is "same-site"
 * and would get the cookie sent along (it could not read the answer, but need not even trigger it).
 */
function refuseCrossSite(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw new AppError('forbidden', 'The session is only handed to the console itself');
}

/**
 * The sign-in steps that take a secret other than a password: the provider's redirect back (its code and state) and
 * an invite link's token. Both secrets are far too long to guess; what is limited is a flood (each callback may cost
 * a call to the provider). Each call is claimed in a sign-in limiter (docs/api.md "Sign-in limits") under a key of its
 * own per client, so it never touches the client's password budget; a success withdraws its own claim and forgets
 * nothing else (a provider account must not wipe the client's password failures). Looser than passwords: a person
 * who reloads a callback page or mistypes a link a few times is not locked out.
 */
export const TOKEN_MAX_FAILURES_PER_CLIENT = 20;
type GuessKind = 'console-sso' | 'invite';
const guessWhat: Record<GuessKind, string> = { 'console-sso': 'single sign-on', invite: 'invite link' };

async function guarded<T>(
  deps: AppDeps,
  checks: PasswordChecks,
  client: Client,
  kind: GuessKind,
  work: (attempt: LoginAttempt) => Promise<T>,
): Promise<T> {
  // No account is named, so the name the limiter also counts is the client's own: a flood from many addresses
  // never makes anyone else wait.
  const key = `${kind}:${clientKeyOf(client.ip)}`;
  const attempt = await claimAttempt(checks, key, key, (reason) =>
    signInFailed(deps, client, { username: guessWhat[kind] }, reason),
  );
  const answer = await work(attempt);
  await attempt.release();
  return answer;
}

/** What the sign-in routes share: the limiters and hash gate, the second-factor challenges, the session streams. */
interface AuthContext {
  deps: AppDeps;
  sessionStreams: SessionStreams;
  checks: PasswordChecks;
  tokenChecks: PasswordChecks;
  challenges: ReturnType<typeof createChallengeStore>;
}

/** The session of the console's cookie, for the console's own pages; a dead cookie is dropped with the refusal. */
async function sessionFromCookie(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ token: string; expires_in: number }> {
  refuseCrossSite(request);
  const candidates = readSessionCookies(request);
  if (candidates.length === 0) throw new AppError('unauthorized', 'Authentication required');
  for (const { token, isPlain } of candidates.slice(0, MAX_SESSION_COOKIES)) {
    const session = await verifySessionToken(deps, token);
    const expiresIn = session ? await sessionSecondsLeft(deps, session.sessionId) : 0;
    if (expiresIn <= 0) continue;
    // A session found through an earlier version's cookie moves to the prefixed one (over HTTPS).
    if (isPlain) upgradeSessionCookie(deps, request, reply, token, expiresIn);
    return { token, expires_in: expiresIn };
  }
  // A dead cookie is of no use to anyone: drop it with the refusal.
  clearSessionCookie(deps, request, reply);
  throw new AppError('unauthorized', 'Session expired or invalid, please sign in again');
}

/** Password sign-in, its second factor, and the second factor's own settings. */
function signInRoutes(app: FastifyInstance, { deps, sessionStreams, checks, challenges }: AuthContext): void {
  registerOperation(
    app,
    operations.login,
    async (request, reply) => {
      const answer = await logIn(deps, checks, challenges, request, request.body);
      if ('token' in answer) setSessionCookie(deps, request, reply, answer.token, answer.expires_in);
      return answer;
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );

  registerOperation(
    app,
    operations.loginSecondFactor,
    async (request, reply) => {
      const session = await logInSecondFactor(deps, checks, challenges, request, request.body);
      setSessionCookie(deps, request, reply, session.token, session.expires_in);
      return session;
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );

  registerOperation(
    app,
    operations.twoFactorStatus,
    async (request) => await twoFactorStatus(deps, requireSession(request)),
  );

  registerOperation(
    app,
    operations.twoFactorSetup,
    async (request) => await startTwoFactorSetup(deps, checks, request, requireSession(request), request.body),
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );

  registerOperation(app, operations.twoFactorEnable, async (request) => {
    const session = requireSession(request);
    const enabled = await enableTwoFactor(deps, checks, request, session, request.body);
    // Sessions signed in with the password alone end, as after a password change; this one stays.
    await deleteOtherSessions(deps, session.userId, session.sessionId);
    sessionStreams.endStreams();
    return enabled;
  });

  registerOperation(
    app,
    operations.twoFactorDisable,
    async (request) => await disableTwoFactor(deps, checks, request, requireSession(request), request.body),
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
}

/** Signing in through an identity provider (sso.ts): the login page's buttons, the start, the redirect back. */
function ssoRoutes(app: FastifyInstance, { deps, checks, tokenChecks, challenges }: AuthContext): void {
  registerOperation(app, operations.consoleProviders, async () => await listConsoleProviders(deps));
  registerOperation(
    app,
    operations.ssoStart,
    async (request, reply) => {
      const { url, stateCookie } = await startSso(deps, request.body.providerId);
      setSsoStateCookie(deps, request, reply, stateCookie, SSO_STATE_SECONDS);
      return { url };
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
  registerOperation(
    app,
    operations.linkIdentity,
    async (request, reply) => {
      const { url, stateCookie } = await startIdentityLink(
        deps,
        checks,
        request,
        requireSession(request),
        request.body,
      );
      setSsoStateCookie(deps, request, reply, stateCookie, SSO_STATE_SECONDS);
      return { url };
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
  registerOperation(app, operations.ssoFinish, async (request, reply) => {
    const state = readSsoStateCookie(deps, request);
    // Used once, whatever the outcome: a reload of the callback page starts over.
    clearSsoStateCookie(deps, request, reply);
    const answer = await guarded(deps, tokenChecks, request, 'console-sso', () =>
      finishSso(deps, challenges, request, state, request.body.query),
    );
    if ('token' in answer) setSessionCookie(deps, request, reply, answer.token, answer.expires_in);
    return answer;
  });
}

/** An invite link's holder (accounts/invites.ts): what it is for, and taking it. */
function inviteRoutes(app: FastifyInstance, { deps, checks, tokenChecks }: AuthContext): void {
  registerOperation(
    app,
    operations.inviteInfo,
    async (request) => await guarded(deps, tokenChecks, request, 'invite', () => inviteInfo(deps, request.body.token)),
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
  registerOperation(
    app,
    operations.acceptInvite,
    async (request) => {
      const taken = await guarded(deps, tokenChecks, request, 'invite', (attempt) =>
        acceptInvite(deps, request.body, (password) => hashGated(checks, () => hashPassword(password), attempt)),
      );
      await deps.audit.record({
        actor: accountActor(taken.account, null),
        address: request.ip,
        action: 'account.create',
        target: { type: 'account', id: taken.account.id, name: taken.account.username },
        after: { username: taken.account.username, role: taken.account.role },
        detail: 'accepted an invite',
      });
      return taken.accepted;
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
}

export async function authRoutes(
  app: FastifyInstance,
  opts: { deps: AppDeps; sessionStreams: SessionStreams },
): Promise<void> {
  const { deps, sessionStreams } = opts;
  // Sign-in, sign-out and the session routes set the console's cookies (session-cookie.ts).
  await registerCookies(app);
  const checks: PasswordChecks = {
    limiter: createLoginLimiter(deps.db, deps.now),
    gate: createHashGate(deps.config.passwordHashConcurrency, deps.config.passwordHashQueue),
  };
  // The key is the client's (no name is shared), so the per-name rule never adds to the per-client one.
  const tokenChecks: PasswordChecks = {
    limiter: createLoginLimiter(deps.db, deps.now, {
      maxFailuresPerClient: TOKEN_MAX_FAILURES_PER_CLIENT,
      maxFailuresPerUsername: TOKEN_MAX_FAILURES_PER_CLIENT,
    }),
    gate: checks.gate,
  };
  const challenges = createChallengeStore(deps.db, deps.now);
  const context: AuthContext = { deps, sessionStreams, checks, tokenChecks, challenges };

  signInRoutes(app, context);
  registerOperation(app, operations.session, async (request, reply) => await sessionFromCookie(deps, request, reply));
  registerOperation(
    app,
    operations.currentAccount,
    async (request) => await currentAccount(deps, requireSession(request)),
  );

  ssoRoutes(app, context);
  inviteRoutes(app, context);

  registerOperation(app, operations.logout, async (request, reply) => {
    await deleteSession(deps, requireSession(request).sessionId);
    sessionStreams.endStreams();
    clearSessionCookie(deps, request, reply);
  });

  registerOperation(
    app,
    operations.changePassword,
    async (request) => {
      await changePassword(deps, checks, request, requireSession(request), request.body);
      sessionStreams.endStreams();
    },
    { bodyLimit: PASSWORD_BODY_LIMIT },
  );
}
