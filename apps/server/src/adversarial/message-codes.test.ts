import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageText, operations, type MessageCode, type Operation } from '@postern/contract';
import { z } from 'zod';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// Every operation with a body or a query, sent bodies and queries that fail its checks (nothing, wrong types, a key
// named like markup): each 422 names a message code on every field error, and the code's English text with its values
// is the message byte for byte (docs/api.md "Message codes"). Values may hold what the caller sent (an unknown key's
// name): they are data, which the console shows as text (apps/console/src/lib/use-zod-form.test.tsx).

const HOSTILE = '<img src=x onerror="alert(document.cookie)">';

let t: TestApp;
let session: string;
let nodeToken: string;

type Method = NonNullable<InjectOptions['method']>;
interface FieldError {
  field: string;
  message: string;
  code?: string;
  params?: Record<string, string | number>;
}
interface Answer {
  status: number;
  body: { message?: string; messageCode?: string; errors?: { body: FieldError[] } };
}

/** The body's top-level keys, whatever wraps the object (refinements, unions). */
function keysOf(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodUnion || schema instanceof z.ZodDiscriminatedUnion)
    return [...new Set((schema.options as z.ZodType[]).flatMap(keysOf))];
  if (schema instanceof z.ZodPipe) return keysOf(schema.in as z.ZodType);
  return [];
}

async function send(auth: string, method: Method, url: string, payload: unknown): Promise<Answer> {
  const token = auth === 'public' ? null : auth === 'node-token' ? nodeToken : session;
  const response = await t.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: response.statusCode, body: response.body ? response.json<Answer['body']>() : {} };
}

describe('message codes on every 422 the API answers', () => {
  beforeAll(async () => {
    t = await buildTestApp();
    session = await t.login();
    const created = await send('session', 'POST', '/api/nodes', { name: 'codes' });
    nodeToken = (created.body as { token: string }).token;
  });
  afterAll(() => t.cleanup());

  it('gives each field error of each operation family a code whose English is the message', async () => {
    const refused: string[] = [];
    const withoutRefusal: string[] = [];
    const problems: string[] = [];
    for (const operation of Object.values(operations) as Operation[]) {
      // An event stream whose query passes stays open: its filters are those of the list beside it (listAudit, ...).
      if ((!operation.body && !operation.query) || operation.response.kind === 'events') continue;
      // Path values that are well formed (a 404 for a malformed one comes before the body is read).
      const url = operation.path.replace(/:(\w+)/g, (_, name: string) => (name === 'type' ? 'http' : '1'));
      const attempts: { url: string; payload: unknown }[] = [];
      if (operation.body) {
        const wrongTypes = Object.fromEntries(keysOf(operation.body).map((key) => [key, [HOSTILE]]));
        attempts.push(
          { url, payload: {} },
          { url, payload: { ...wrongTypes, [HOSTILE]: HOSTILE } },
          { url, payload: [HOSTILE] },
        );
      }
      if (operation.query) {
        const keys = keysOf(operation.query);
        const query = new URLSearchParams(keys.map((key): [string, string] => [key, HOSTILE]));
        attempts.push({ url: `${url}?${query.toString()}`, payload: undefined });
      }
      let answered422 = false;
      for (const attempt of attempts) {
        const answer = await send(operation.auth, operation.method, attempt.url, attempt.payload);
        if (answer.status !== 422) continue;
        answered422 = true;
        expect(answer.body.messageCode, operation.name).toBe('validation_failed');
        for (const error of answer.body.errors?.body ?? []) {
          const where = `${operation.name} ${error.field}: ${error.message}`;
          refused.push(where);
          if (error.code === undefined) problems.push(`no code: ${where}`);
          else if (messageText(error.code as MessageCode, error.params) !== error.message)
            problems.push(`${error.code} says otherwise: ${where}`);
          if (Object.values(error.params ?? {}).some((value) => !['string', 'number'].includes(typeof value)))
            problems.push(`a value neither text nor number: ${where}`);
        }
      }
      if (!answered422) withoutRefusal.push(operation.name);
    }
    // Every operation that takes input refused some of it: the walk reached them all.
    expect(problems).toEqual([]);
    expect(withoutRefusal).toEqual([]);
    expect(refused.length).toBeGreaterThan(100);
  });
});
