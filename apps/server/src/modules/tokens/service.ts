import { and, count, desc, eq } from 'drizzle-orm';
import type { PersonalAccessToken, PersonalAccessTokenCreated, TokenCreate } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { personalAccessTokens } from '../../db/schema.js';
import { badRequest, notFound } from '../../errors.js';
import { getNodeRow } from '../nodes/repository.js';
import { generateToken, hashToken } from './token-secret.js';

export type TokenRow = typeof personalAccessTokens.$inferSelect;

export const LOCAL_NODE_TOKENS_MESSAGE = 'The local node cannot have access tokens';

/** The token stored under this secret (by its hash), if any. */
export async function findTokenBySecret(deps: Pick<AppDeps, 'db'>, secret: string): Promise<TokenRow | undefined> {
  return await deps.db
    .select()
    .from(personalAccessTokens)
    .where(eq(personalAccessTokens.tokenHash, hashToken(secret)))
    .get();
}

export async function recordTokenUse(deps: Pick<AppDeps, 'db'>, id: number, at: Date): Promise<void> {
  await deps.db.write(
    async (tx) =>
      await tx
        .update(personalAccessTokens)
        .set({ lastUsedAt: at.toISOString() })
        .where(eq(personalAccessTokens.id, id))
        .run(),
  );
}

export function toToken(row: TokenRow): PersonalAccessToken {
  return {
    id: row.id,
    name: row.name,
    expireAt: row.expireAt,
    revoked: row.revoked,
    lastUsedAt: row.lastUsedAt,
    created_at: row.createdAt,
  };
}

/** Loads a node that may hold tokens: it exists and is not the local node. */
async function getTokenHolder(deps: AppDeps, nodeId: number) {
  const node = await getNodeRow(deps, nodeId);
  if (node.isLocal) throw badRequest(LOCAL_NODE_TOKENS_MESSAGE);
  return node;
}

/** Row values for a new token plus the secret, which only the creation answer ever shows. */
export function newTokenValues(deps: AppDeps, nodeId: number, body: TokenCreate) {
  const { token, tokenHash } = generateToken();
  const at = deps.now().toISOString();
  const expireAt = body.expireAt ? new Date(body.expireAt).toISOString() : null;
  return { token, values: { nodeId, name: body.name, tokenHash, expireAt, createdAt: at, updatedAt: at } };
}

export async function createToken(
  deps: AppDeps,
  nodeId: number,
  body: TokenCreate,
): Promise<PersonalAccessTokenCreated> {
  await getTokenHolder(deps, nodeId);
  const { token, values } = newTokenValues(deps, nodeId, body);
  const row = await deps.db.write(async (tx) => await tx.insert(personalAccessTokens).values(values).returning().get());
  return { id: row.id, name: row.name, expireAt: row.expireAt, token };
}

/** Newest first: the token just created shows on the first page of the card. */
export async function listTokens(deps: AppDeps, nodeId: number, query: { page: number; limit: number }) {
  await getTokenHolder(deps, nodeId);
  const where = eq(personalAccessTokens.nodeId, nodeId);
  const rows = await deps.db
    .select()
    .from(personalAccessTokens)
    .where(where)
    .orderBy(desc(personalAccessTokens.id))
    .limit(query.limit)
    .offset((query.page - 1) * query.limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(personalAccessTokens).where(where).get())?.n ?? 0;
  return { data: rows.map(toToken), page: query.page, limit: query.limit, total };
}

async function getTokenRow(deps: AppDeps, nodeId: number, tokenId: number): Promise<TokenRow> {
  await getTokenHolder(deps, nodeId);
  const row = await deps.db
    .select()
    .from(personalAccessTokens)
    .where(and(eq(personalAccessTokens.id, tokenId), eq(personalAccessTokens.nodeId, nodeId)))
    .get();
  if (!row) throw notFound('Access token');
  return row;
}

export async function revokeToken(deps: AppDeps, nodeId: number, tokenId: number): Promise<PersonalAccessToken> {
  await getTokenRow(deps, nodeId, tokenId);
  const row = await deps.db.write(
    async (tx) =>
      await tx
        .update(personalAccessTokens)
        .set({ revoked: true, updatedAt: deps.now().toISOString() })
        .where(eq(personalAccessTokens.id, tokenId))
        .returning()
        .get(),
  );
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- drizzle types get() as the row; no match gives undefined
  if (!row) throw notFound('Access token');
  return toToken(row);
}

export async function deleteToken(deps: AppDeps, nodeId: number, tokenId: number): Promise<void> {
  await getTokenRow(deps, nodeId, tokenId);
  await deps.db.write(
    async (tx) => await tx.delete(personalAccessTokens).where(eq(personalAccessTokens.id, tokenId)).run(),
  );
}
