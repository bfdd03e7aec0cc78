import type { FastifyRequest } from 'fastify';
import { isWellFormedPat } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { bearerToken } from '../../http/authenticate.js';
import { findNode } from '../nodes/repository.js';
import type { NodeRow } from '../nodes/to-node.js';
import { findTokenBySecret, recordTokenUse } from '../tokens/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The node whose access token authenticated an agent request. */
    agentNode: NodeRow | null;
    /** The access token of an agent request: its id and name (the audit log's actor), never the secret. */
    agentToken: { id: number; name: string } | null;
  }
}

/** lastUsedAt is informative; writing it at most once a minute keeps agent calls free of a write each. */
const LAST_USED_GRANULARITY_MS = 60_000;

export const NODE_DISABLED_MESSAGE =
  'This node is disabled: the gateway refuses its access tokens until an operator connects it again (Connect in the console)';

/**
 * Node access tokens: well-formed (prefix + checksum, no DB lookup for garbage), known by hash, not revoked,
 * not expired, and their node enabled. Revocation, expiry and disabling take effect on the very next call.
 */
export async function authenticateAgent(deps: AppDeps, request: FastifyRequest): Promise<void> {
  const token = bearerToken(request);
  if (!token) throw new AppError('unauthorized', 'Access token required');
  if (!isWellFormedPat(token)) throw new AppError('unauthorized', 'Invalid token');
  const row = await findTokenBySecret(deps, token);
  if (!row) throw new AppError('unauthorized', 'Invalid token');
  if (row.revoked) throw new AppError('unauthorized', 'Token revoked');
  const now = deps.now();
  if (row.expireAt && Date.parse(row.expireAt) <= now.getTime()) throw new AppError('unauthorized', 'Token expired');
  const node = await findNode(deps, row.nodeId);
  if (!node) throw new AppError('unauthorized', 'Invalid token');
  // 403, not 401: the token itself is good and works again once the node is connected (the CLI keeps it).
  if (!node.enabled) throw new AppError('forbidden', NODE_DISABLED_MESSAGE);
  if (!row.lastUsedAt || now.getTime() - Date.parse(row.lastUsedAt) >= LAST_USED_GRANULARITY_MS) {
    await recordTokenUse(deps, row.id, now);
  }
  request.agentNode = node;
  request.agentToken = { id: row.id, name: row.name };
  return Promise.resolve();
}

export function requireAgentNode(request: FastifyRequest): NodeRow {
  if (!request.agentNode) throw new AppError('unauthorized', 'Access token required');
  return request.agentNode;
}
