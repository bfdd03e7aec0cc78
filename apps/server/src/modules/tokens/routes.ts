import type { FastifyInstance } from 'fastify';
import { makeTokenCreateSchema, operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { createToken, deleteToken, listTokens, revokeToken } from './service.js';

export async function tokenRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  // Built with the injected clock, so "expiry not in the past" follows the same time as the expiry checks.
  const body = makeTokenCreateSchema(deps.now);

  registerOperation(
    app,
    operations.listTokens,
    async (request) => await listTokens(deps, request.params.id, request.query),
  );
  registerOperation(
    app,
    operations.createToken,
    async (request) => await createToken(deps, request.params.id, request.body),
    {
      body,
    },
  );
  registerOperation(
    app,
    operations.revokeToken,
    async (request) => await revokeToken(deps, request.params.id, request.params.tokenId),
  );
  registerOperation(
    app,
    operations.deleteToken,
    async (request) => await deleteToken(deps, request.params.id, request.params.tokenId),
  );
}
