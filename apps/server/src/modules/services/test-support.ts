import type { InjectOptions } from 'fastify';
import { generateKeyPair } from '../../dataplane/wireguard/keys.js';
import type { AppDeps } from '../../deps.js';
import { nodes } from '../../db/schema.js';
import type { TestApp } from '../../test/build-test-app.js';

// Test factories for the resource modules: rows are inserted directly so a test states only what it cares about.

type NodeRow = typeof nodes.$inferSelect;
let nodeCounter = 0;

/** A node with a unique tunnel address in the default 10.44.0.0/16 subnet; override any column. */
export async function insertNode(
  deps: Pick<AppDeps, 'db' | 'secrets'>,
  overrides: Partial<typeof nodes.$inferInsert> = {},
): Promise<NodeRow> {
  nodeCounter++;
  const keys = generateKeyPair();
  return await deps.db.write(
    async (tx) =>
      await tx
        .insert(nodes)
        .values({
          name: `node-${nodeCounter}`,
          address: `10.44.${100 + Math.floor(nodeCounter / 250)}.${(nodeCounter % 250) + 2}`,
          publicKey: keys.publicKey,
          privateKeyEnc: deps.secrets.encrypt(keys.privateKey),
          ...overrides,
        })
        .returning()
        .get(),
  );
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
}

/** `app.inject` with the session token and a parsed JSON body; the body type is the test's assertion. */
export function createApiClient(t: TestApp, token: string) {
  return async <T = Record<string, unknown>>(
    method: NonNullable<InjectOptions['method']>,
    url: string,
    payload?: unknown,
  ): Promise<ApiResponse<T>> => {
    const response = await t.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as NonNullable<InjectOptions['payload']> }),
    });
    return { status: response.statusCode, body: (response.body ? response.json() : null) as T };
  };
}

/** A 422 body's message for one field, for compact assertions. */
export function fieldMessage(body: unknown, field: string): string | undefined {
  const errors = (body as { errors?: { body?: { field: string; message: string }[] } }).errors?.body ?? [];
  return errors.find((error) => error.field === field)?.message;
}
