import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ACCESS_PATH } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import {
  OIDC_COOKIE,
  OIDC_COOKIE_SECONDS,
  findProtectedService,
  finishSingleSignOn,
  requestHost,
  returnPathOf,
  signInWithPassword,
  signOut,
  startSingleSignOn,
  useShareLink,
  visitorCookies,
  type ProtectedService,
} from './exchange.js';
import { registerCookies } from '../../http/cookies.js';
import { accessCookieName } from './cookie.js';
import { STYLESHEET, refusedPage, signInPage, signOutPage, type ServiceLabel } from './pages.js';
import { visitorChecksFor } from './visitor-checks.js';

// The sign-in exchange on every protected host (docs/ACCESS.md): nginx proxies `location /_postern/access/` here with
// Host set to the host the visitor asked for and X-Forwarded-For to the visitor. Pages, cookies and redirects; the
// logic is in exchange.ts. On the console's own host (or any host without a protected service) every path is a 404.

/** Form bodies are three short fields. */
const FORM_LIMIT = 4096;

interface Query {
  s?: string;
  rd?: string;
  token?: string;
  error?: string;
  error_description?: string;
}

function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(page);
}

const idOf = (value: string | undefined): number | null =>
  value !== undefined && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : null;

const labelOf = (target: ProtectedService, host: string): ServiceLabel => ({ name: target.service.name, host });

const originOf = (deps: AppDeps, host: string): string =>
  `https://${host}${deps.config.httpsPort === 443 ? '' : `:${deps.config.httpsPort}`}`;

function setVisitorCookie(reply: FastifyReply, name: string, value: string, maxAge: number): void {
  void reply.setCookie(name, value, { path: '/', httpOnly: true, secure: true, sameSite: 'lax', maxAge });
}

const notHere = (reply: FastifyReply): FastifyReply =>
  sendPage(reply, 404, refusedPage(null, 'Not found', 'Nothing on this address needs a sign-in.'));
const badReturn = (reply: FastifyReply, target: ProtectedService, host: string): FastifyReply =>
  sendPage(
    reply,
    400,
    refusedPage(labelOf(target, host), 'Not this way', 'This sign-in link leads away from this site: it was refused.'),
  );

/**
 * A form post from another site (or a sibling subdomain, which may be another tenant's) is refused. Browsers say
 * where a request comes from in Sec-Fetch-Site; their Origin is "null" on these pages (Referrer-Policy: no-referrer),
 * so it is compared only when it names an origin.
 */
function isForeignPost(deps: AppDeps, request: FastifyRequest, host: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const from = request.headers.origin;
  return from !== undefined && from !== 'null' && from !== originOf(deps, host);
}

/**
 * Visitor events are entries any client can cause at will: summed per client like refused console sign-ins
 * (docs/api.md "Audit log"), so a flood costs a bounded number of rows.
 */
async function record(
  deps: AppDeps,
  request: FastifyRequest,
  action: string,
  target: ProtectedService | null,
  host: string,
  detail: string,
  who: string | null = null,
): Promise<void> {
  await deps.audit
    .recordSummed({
      actor: { kind: 'anonymous', name: who },
      address: request.ip,
      action,
      target: target
        ? { type: 'http', id: target.service.id, name: target.service.name }
        : { type: 'host', name: host },
      reason: detail,
    })
    .catch((err: unknown) => request.log.warn({ err }, 'access: could not record a visitor event'));
}

/** The sign-in page of a target, with an optional error. */
function signIn(target: ProtectedService, host: string, rd: string, error?: string): string {
  return signInPage({
    service: labelOf(target, host),
    sso:
      target.policy.providerId !== null && target.providerName !== null
        ? {
            providerName: target.providerName,
            href: `${ACCESS_PATH}/oidc?s=${target.service.id}&rd=${encodeURIComponent(rd)}`,
          }
        : null,
    password: target.policy.passwordHash !== null ? { s: target.service.id, rd } : null,
    error,
  });
}

/** The sign-in page and its password form. */
function passwordRoutes(app: FastifyInstance, deps: AppDeps, checks: ReturnType<typeof visitorChecksFor>): void {
  app.get<{ Querystring: Query }>(`${ACCESS_PATH}/sign-in`, async (request, reply) => {
    const host = requestHost(request.headers.host);
    const target = host
      ? await findProtectedService(deps, host, idOf(request.query.s), request.query.rd ?? null)
      : null;
    if (!host || !target) return notHere(reply);
    const rd = returnPathOf(request.query.rd, target.service);
    if (rd === null) return badReturn(reply, target, host);
    return sendPage(reply, 200, signIn(target, host, rd));
  });

  app.post<{ Body: { s?: string; rd?: string; password?: string } | undefined }>(
    `${ACCESS_PATH}/password`,
    { bodyLimit: FORM_LIMIT },
    async (request, reply) => {
      const host = requestHost(request.headers.host);
      const body = request.body ?? {};
      const target = host ? await findProtectedService(deps, host, idOf(body.s), body.rd ?? null) : null;
      if (!host || !target || target.policy.passwordHash === null) return notHere(reply);
      if (isForeignPost(deps, request, host))
        return sendPage(
          reply,
          403,
          refusedPage(labelOf(target, host), 'Refused', 'This form was sent from another site.'),
        );
      const rd = returnPathOf(body.rd, target.service);
      if (rd === null) return badReturn(reply, target, host);
      const outcome = await signInWithPassword(deps, checks, target, host, request.ip, body.password ?? '');
      switch (outcome.kind) {
        case 'ok':
          setVisitorCookie(reply, accessCookieName(target.policy.id), outcome.cookie, outcome.maxAge);
          await record(deps, request, 'access.sign-in', target, host, 'password');
          return reply
            .code(303)
            .header('location', `${originOf(deps, host)}${rd}`)
            .header('cache-control', 'no-store')
            .send();
        case 'wrong':
          await record(deps, request, 'access.sign-in-failed', target, host, 'wrong password');
          return sendPage(reply, 401, signIn(target, host, rd, 'That password is not right.'));
        case 'limited': {
          await record(deps, request, 'access.sign-in-failed', target, host, 'too many attempts (rate limited)');
          const minutes = Math.max(1, Math.ceil(outcome.retryAfterSeconds / 60));
          void reply.header('retry-after', String(outcome.retryAfterSeconds));
          return sendPage(
            reply,
            429,
            signIn(
              target,
              host,
              rd,
              `Too many wrong passwords from your address: try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
            ),
          );
        }
        case 'busy':
          void reply.header('retry-after', '1');
          return sendPage(reply, 503, signIn(target, host, rd, 'Too many sign-ins at once: try again in a moment.'));
      }
    },
  );
}

/** Single sign-on through the service's identity provider: the start and the provider's redirect back. */
function singleSignOnRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: Query }>(`${ACCESS_PATH}/oidc`, async (request, reply) => {
    const host = requestHost(request.headers.host);
    const target = host
      ? await findProtectedService(deps, host, idOf(request.query.s), request.query.rd ?? null)
      : null;
    if (!host || !target || target.policy.providerId === null) return notHere(reply);
    const rd = returnPathOf(request.query.rd, target.service);
    if (rd === null) return badReturn(reply, target, host);
    let started: Awaited<ReturnType<typeof startSingleSignOn>>;
    try {
      started = await startSingleSignOn(deps, target, host, originOf(deps, host), rd);
    } catch (err) {
      request.log.warn({ err, provider: target.providerName }, 'access: the identity provider does not answer');
      started = null;
    }
    if (!started)
      return sendPage(
        reply,
        502,
        refusedPage(
          labelOf(target, host),
          'Sign-in unavailable',
          `The identity provider ${target.providerName ?? ''} does not answer. Try again later.`,
        ),
      );
    setVisitorCookie(reply, OIDC_COOKIE, started.stateCookie, OIDC_COOKIE_SECONDS);
    return reply.code(302).header('location', started.url).header('cache-control', 'no-store').send();
  });

  app.get<{ Querystring: Query }>(`${ACCESS_PATH}/callback`, async (request, reply) => {
    const host = requestHost(request.headers.host);
    if (!host) return notHere(reply);
    const cookie = request.headers.cookie
      ?.split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${OIDC_COOKIE}=`))
      ?.slice(OIDC_COOKIE.length + 1);
    void reply.clearCookie(OIDC_COOKIE, { path: '/', httpOnly: true, secure: true, sameSite: 'lax' });
    if (request.query.error !== undefined) {
      const why = (request.query.error_description ?? request.query.error).slice(0, 200);
      return sendPage(reply, 401, refusedPage(null, 'Sign-in cancelled', `The identity provider said: ${why}`));
    }
    const outcome = await finishSingleSignOn(
      deps,
      host,
      cookie,
      new URL(`${originOf(deps, host)}${request.url}`),
      request.ip,
    );
    switch (outcome.kind) {
      case 'ok': {
        const { target, identity } = outcome;
        setVisitorCookie(reply, accessCookieName(target.policy.id), outcome.cookie, outcome.maxAge);
        await record(deps, request, 'access.sign-in', target, host, 'sso', identity.email ?? identity.subject);
        return reply
          .code(302)
          .header('location', `${originOf(deps, host)}${outcome.rd}`)
          .header('cache-control', 'no-store')
          .send();
      }
      case 'refused': {
        const { target, identity } = outcome;
        const who = identity.email ?? identity.name ?? identity.subject;
        await record(deps, request, 'access.refused', target, host, `sso: ${outcome.reason}`, who);
        const reason =
          outcome.reason === 'unverified'
            ? `Your provider has not verified the email address ${who}, so it cannot be let in.`
            : `You are signed in as ${who}, who is not allowed to reach this service. Ask its operator to add you.`;
        return sendPage(reply, 403, refusedPage(labelOf(target, host), 'Not allowed', reason));
      }
      case 'expired':
        return sendPage(
          reply,
          400,
          refusedPage(null, 'Sign-in expired', 'This sign-in took too long or was started elsewhere: start it again.'),
        );
      case 'failed':
        request.log.warn({ message: outcome.message }, 'access: single sign-on failed');
        return sendPage(
          reply,
          502,
          refusedPage(
            outcome.target ? labelOf(outcome.target, host) : null,
            'Sign-in failed',
            'The identity provider did not confirm this sign-in. Start it again.',
          ),
        );
    }
  });
}

/** A share link: its token exchanged for a visitor cookie. */
function shareLinkRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: Query }>(`${ACCESS_PATH}/share`, async (request, reply) => {
    const host = requestHost(request.headers.host);
    if (!host) return notHere(reply);
    const outcome = await useShareLink(deps, host, request.query.token ?? '', request.ip);
    if (outcome.kind === 'ok') {
      setVisitorCookie(reply, accessCookieName(outcome.target.policy.id), outcome.cookie, outcome.maxAge);
      await record(deps, request, 'access.share-link-used', outcome.target, host, outcome.linkName);
      // The token was in this URL once; the address the visitor goes on to holds none.
      return reply
        .code(302)
        .header('location', `${originOf(deps, host)}${outcome.path}`)
        .header('cache-control', 'no-store')
        .send();
    }
    const label = outcome.target ? labelOf(outcome.target, host) : null;
    const reasons = {
      unknown: ['Link not valid', 'This link is not valid here. Check that it was copied whole.'],
      revoked: ['Link revoked', 'This link was revoked by whoever shared it.'],
      expired: ['Link expired', 'This link has expired. Ask whoever shared it for a new one.'],
      off: ['Links turned off', 'Share links are turned off for this service.'],
    } as const;
    const [title, reason] = reasons[outcome.reason];
    if (outcome.reason !== 'unknown')
      await record(deps, request, 'access.refused', outcome.target, host, `share link ${outcome.reason}`);
    return sendPage(reply, outcome.reason === 'unknown' ? 404 : 410, refusedPage(label, title, reason));
  });
}

/** The sign-out page and its form. */
function signOutRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get(`${ACCESS_PATH}/sign-out`, async (request, reply) => {
    const host = requestHost(request.headers.host);
    if (!host) return notHere(reply);
    return sendPage(reply, 200, signOutPage(host, false));
  });

  app.post(`${ACCESS_PATH}/sign-out`, { bodyLimit: FORM_LIMIT }, async (request, reply) => {
    const host = requestHost(request.headers.host);
    if (!host) return notHere(reply);
    if (isForeignPost(deps, request, host))
      return sendPage(reply, 403, refusedPage(null, 'Refused', 'This form was sent from another site.'));
    const { revoked, names } = await signOut(deps, host, visitorCookies(request.headers.cookie));
    for (const name of names)
      void reply.clearCookie(name, { path: '/', httpOnly: true, secure: true, sameSite: 'lax' });
    if (revoked) await record(deps, request, 'access.sign-out', null, host, `${names.length} session cookie(s)`);
    return sendPage(reply, 200, signOutPage(host, true));
  });
}

export async function accessExchangeRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  // The visitors' cookies (a policy's session, the OpenID Connect state) are set here only.
  await registerCookies(app);
  const checks = visitorChecksFor(deps);

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
    },
  );

  app.get(`${ACCESS_PATH}/style.css`, async (_request, reply) =>
    reply
      .header('content-type', 'text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(STYLESHEET),
  );

  passwordRoutes(app, deps, checks);
  singleSignOnRoutes(app, deps);
  shareLinkRoute(app, deps);
  signOutRoutes(app, deps);
}
