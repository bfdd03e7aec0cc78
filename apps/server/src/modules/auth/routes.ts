import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ChangePasswordRequestSchema, LoginRequestSchema, LoginResponseSchema, routes } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { createLoginLimiter } from './rate-limit.js';
import { changePassword, logIn } from './service.js';
import { deleteSession } from './sessions.js';

export async function authRoutes(fastify: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const limiter = createLoginLimiter(deps.now);

  app.post(routes.login.path, { schema: { body: LoginRequestSchema, response: { 200: LoginResponseSchema } } }, (request) =>
    logIn(deps, limiter, request.ip, request.body),
  );

  app.post(routes.logout.path, { schema: { response: { 204: z.null() } } }, async (request, reply) => {
    deleteSession(deps, requireSession(request).sessionId);
    return reply.code(204).send(null);
  });

  app.patch(routes.changePassword.path, { schema: { body: ChangePasswordRequestSchema, response: { 204: z.null() } } }, async (request, reply) => {
    await changePassword(deps, limiter, request.ip, requireSession(request), request.body);
    return reply.code(204).send(null);
  });
}
