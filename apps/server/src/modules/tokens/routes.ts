import type { FastifyInstance } from 'fastify';
import { makeTokenCreateSchema, operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { createToken, deleteToken, listTokens, revokeToken } from './service.js';

export async function tokenRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  // Built with the injected clock, so "expiry not in the past" follows the same time as the expiry checks.
  const body = makeTokenCreateSchema(deps.now);

  registerOperation(app, operations.listTokens, (request) => listTokens(deps, request.params.id, request.query));
  registerOperation(app, operations.createToken, (request) => createToken(deps, request.params.id, request.body), {
    body,
  });
  registerOperation(app, operations.revokeToken, (request) =>
    revokeToken(deps, request.params.id, request.params.tokenId),
  );
  registerOperation(app, operations.deleteToken, (request) =>
    deleteToken(deps, request.params.id, request.params.tokenId),
  );
}
