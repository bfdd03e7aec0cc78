import type { FastifyInstance } from 'fastify';
import {
  IdParamSchema,
  listOf,
  makeTokenCreateSchema,
  PageQuerySchema,
  PersonalAccessTokenCreatedSchema,
  PersonalAccessTokenSchema,
  routes,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { createToken, deleteToken, listTokens, revokeToken } from './service.js';

const TokenParamsSchema = IdParamSchema.extend({ tokenId: IdParamSchema.shape.id });

export async function tokenRoutes(fastify: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Built with the injected clock, so "expiry not in the past" follows the same time as the expiry checks.
  const TokenCreateSchema = makeTokenCreateSchema(deps.now);

  app.get(routes.listTokens.path, { schema: { params: IdParamSchema, querystring: PageQuerySchema, response: { 200: listOf(PersonalAccessTokenSchema) } } }, (request) =>
    listTokens(deps, request.params.id, request.query),
  );

  app.post(routes.createToken.path, { schema: { params: IdParamSchema, body: TokenCreateSchema, response: { 201: PersonalAccessTokenCreatedSchema } } }, async (request, reply) =>
    reply.code(201).send(createToken(deps, request.params.id, request.body)),
  );

  app.patch(routes.revokeToken.path, { schema: { params: TokenParamsSchema, response: { 200: PersonalAccessTokenSchema } } }, (request) =>
    revokeToken(deps, request.params.id, request.params.tokenId),
  );

  app.delete(routes.deleteToken.path, { schema: { params: TokenParamsSchema } }, async (request, reply) => {
    deleteToken(deps, request.params.id, request.params.tokenId);
    return reply.code(204).send();
  });
}
