import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';

// Cookies (`reply.setCookie`, `server.parseCookie`) for the route plugins that set them: the console's sign-in and
// session routes (modules/auth) and the visitors' access exchange (modules/access). Registered inside those plugins,
// not on the app: the plugin adds an `onSend` hook to every route of the context it is registered in, and no other
// route sets a cookie (bench/README.md, api-steps.ts). Cookies are parsed on demand by the code that reads them
// (hook: false).
export async function registerCookies(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCookie, { hook: false });
}
