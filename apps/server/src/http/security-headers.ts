import type { FastifyInstance } from 'fastify';
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

export function registerSecurityHeaders(app: FastifyInstance): void {
  // On the raw response, so hijacked replies (event streams) carry them too.
  app.addHook('onRequest', (request, reply, done) => {
    applyHelmet(request.raw, reply.raw, (error?: unknown) => {
      if (request.protocol === 'https') reply.raw.setHeader('strict-transport-security', HSTS);
      done(error instanceof Error ? error : undefined);
    });
  });
  // API answers are never cacheable: several carry secrets (sign-in, session, node and token creation, agent config,
  // config download), and none gains from a cache. A route that sets its own Cache-Control keeps it.
  app.addHook('onSend', async (request, reply) => {
    if (isApiPath(request.url) && !reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
  });
}
