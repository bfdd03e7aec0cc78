import { Writable } from 'node:stream';
import { DrizzleQueryError } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { createLogger } from './logger.js';

test('a failed statement in a logged error keeps its statement and its cause, never its parameters', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  // What drizzle's asynchronous drivers throw for a failed read (the PostgreSQL store's reads), inside the error a
  // request handler logs.
  const failed = new DrizzleQueryError(
    'select "id" from "users" where "password_hash" = ?',
    ['$argon2id$canary-x9'],
    Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }),
  );
  createLogger('info', sink).error({ err: new Error('request failed', { cause: failed }) }, 'request failed');
  const logged = lines.join('');
  expect(logged).not.toContain('canary-x9');
  expect(logged).toContain('where \\"password_hash\\" = ?');
  expect(logged).toContain('Connection terminated unexpectedly');
});
