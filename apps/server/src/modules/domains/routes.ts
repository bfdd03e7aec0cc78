import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainCreateSchema, DomainSchema, DomainUpdateSchema, IdParamSchema, listOf, PageQuerySchema, routes } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { acceptEveryDomain, createDomain, deleteDomain, getDomain, listDomains, updateDomain, type DomainCheck } from './service.js';

/** Paging plus an optional `search` (part of a name) for the console's domain autocomplete. */
const DomainListQuerySchema = PageQuerySchema.extend({ search: z.string().trim().max(253).optional() });

export interface DomainRoutesOptions {
  deps: AppDeps;
  /** Checks that a certbot domain points at this gateway (issue 4); defaults to accepting every domain. */
  checkDomain?: DomainCheck;
}

export async function domainRoutes(fastify: FastifyInstance, opts: DomainRoutesOptions): Promise<void> {
  const { deps } = opts;
  const options = { checkDomain: opts.checkDomain ?? acceptEveryDomain };
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(routes.listDomains.path, { schema: { querystring: DomainListQuerySchema, response: { 200: listOf(DomainSchema) } } }, (request) =>
    listDomains(deps, request.query),
  );

  app.get(routes.getDomain.path, { schema: { params: IdParamSchema, response: { 200: DomainSchema } } }, (request) =>
    getDomain(deps, request.params.id),
  );

  app.post(routes.createDomain.path, { schema: { body: DomainCreateSchema, response: { 201: DomainSchema } } }, async (request, reply) =>
    reply.code(201).send(await createDomain(deps, request.body, options)),
  );

  app.patch(
    routes.updateDomain.path,
    { schema: { params: IdParamSchema, body: DomainUpdateSchema, response: { 200: DomainSchema } } },
    (request) => updateDomain(deps, request.params.id, request.body, options),
  );

  app.delete(routes.deleteDomain.path, { schema: { params: IdParamSchema, response: { 204: z.null() } } }, async (request, reply) => {
    await deleteDomain(deps, request.params.id);
    return reply.code(204).send(null);
  });
}
