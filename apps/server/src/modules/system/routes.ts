import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HealthSchema, routes, SystemInfoSchema } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { consolePublicUrl, readConsoleCertificate, type ConsoleCertificate } from './console-certificate.js';
import { buildOpenApiDocument, type RegisteredRoute } from './openapi.js';

export async function systemRoutes(fastify: FastifyInstance, opts: { deps: AppDeps; version: string; registered: RegisteredRoute[] }): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;

  app.get(routes.health.path, { schema: { response: { 200: HealthSchema } } }, () => ({ status: 'ok' as const, version: opts.version }));

  // Built on first request, when every route is registered; the document is plain JSON, not a contract entity.
  app.get(routes.openapi.path, { schema: { response: { 200: z.record(z.string(), z.unknown()) } } }, () => {
    document ??= buildOpenApiDocument(opts.registered, opts.version);
    return document;
  });

  // Behind the session gate like every /api route: what the console prints in its connect command.
  app.get(routes.systemInfo.path, { schema: { response: { 200: SystemInfoSchema } } }, async (request) => {
    let certificate: ConsoleCertificate | null = null;
    try {
      certificate = await readConsoleCertificate(opts.deps.config.dataDir);
    } catch (error) {
      // The URL is still right without a pin; the CLI then says how to pin when verification fails.
      request.log.warn({ err: error }, 'cannot read the console certificate');
    }
    return { publicUrl: consolePublicUrl(opts.deps.config), certificate };
  });
}
