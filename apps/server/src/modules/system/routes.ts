import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HealthSchema, routes } from '@postern/contract';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { buildOpenApiDocument, type RegisteredRoute } from './openapi.js';

export async function systemRoutes(fastify: FastifyInstance, opts: { version: string; registered: RegisteredRoute[] }): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;

  app.get(routes.health.path, { schema: { response: { 200: HealthSchema } } }, () => ({ status: 'ok' as const, version: opts.version }));

  // Built on first request, when every route is registered; the document is plain JSON, not a contract entity.
  app.get(routes.openapi.path, { schema: { response: { 200: z.record(z.string(), z.unknown()) } } }, () => {
    document ??= buildOpenApiDocument(opts.registered, opts.version);
    return document;
  });
}
