import type { FastifyInstance, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import { isApiPath } from './console-static.js';

// Headers on every response, console pages and API alike (docs/api.md "Security headers"). The console's
// index.html loads only its own files (no inline script: the theme is applied by /theme-init.js), so the policy
// allows scripts and styles from the console's origin only. React's `style` props go through the CSSOM, which
// style-src does not restrict.

export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * One year; only sent over HTTPS (a browser ignores it over HTTP, and it must not pin a host reached by plain HTTP).
 */
const HSTS = 'max-age=31536000';

const applyHelmet = helmet({
  contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
  strictTransportSecurity: false,
  xFrameOptions: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * The headers helmet sets, taken once: with static directives (no nonce, no function) they are the same for every
 * request, and running helmet's middleware chain per request was a measurable share of a small API answer's cost
 * (bench/README.md, api.ts).
 */
function helmetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      // Lower-cased once here, not by every response; helmet's values are single strings.
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader() {
      // x-powered-by: Node never sets it.
    },
  };
  let outcome: { error?: unknown } | undefined;
  applyHelmet({} as never, response as never, (error?: unknown) => (outcome = { error }));
  // helmet's middlewares are synchronous: anything else would leave headers out, so refuse to start.
  if (outcome === undefined || outcome.error !== undefined)
    throw new Error('security headers: helmet did not set its headers at once', { cause: outcome?.error });
  return headers;
}

const HEADERS = helmetHeaders();
const HTTPS_HEADERS = { ...HEADERS, 'strict-transport-security': HSTS };
const API_HEADERS = { ...HEADERS, 'cache-control': 'no-store' };
const HTTPS_API_HEADERS = { ...HTTPS_HEADERS, 'cache-control': 'no-store' };

/** The security headers of a response to `request` (HSTS over HTTPS only). */
export function securityHeadersFor(request: FastifyRequest): Readonly<Record<string, string>> {
  return request.protocol === 'https' ? HTTPS_HEADERS : HEADERS;
}

export function registerSecurityHeaders(app: FastifyInstance): void {
  // On the reply, written with its other headers in one writeHead. Hijacked replies (event streams) skip the reply's
  // headers: sse.ts writes `securityHeadersFor` itself. Set on the raw response instead, each header stayed in the
  // response's own header table (an array and a lower-cased name per header) for as long as a stream was open.
  // API answers are never cacheable: several carry secrets (sign-in, session, node and token creation, agent config,
  // config download), and none gains from a cache. Set here, before the handler, a route's own Cache-Control
  // replaces it (no onSend hook for every answer).
  app.addHook('onRequest', (request, reply, done) => {
    const isHttps = request.protocol === 'https';
    void reply.headers(
      isApiPath(request.url) ? (isHttps ? HTTPS_API_HEADERS : API_HEADERS) : isHttps ? HTTPS_HEADERS : HEADERS,
    );
    done();
  });
}
