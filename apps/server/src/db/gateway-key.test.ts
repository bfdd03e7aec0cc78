import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createSecretBox } from '../secrets.js';
import { openSqliteStore, type Store } from './client.js';
import { KEY_MISMATCH_MESSAGE, readGatewayPrivateKey, storeGatewayPrivateKeyIfAbsent } from './gateway-key.js';
import { resolveMigrationsDir } from './migrations-dir.js';

let dir: string;
let db: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'postern-key-'));
  db = openSqliteStore(join(dir, 'postern.db'), resolveMigrationsDir());
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a gateway whose secret key did not write the database refuses to start, and says why', async () => {
  const first = createSecretBox(randomBytes(32));
  await storeGatewayPrivateKeyIfAbsent({ db, secrets: first }, 'the-gateway-private-key');
  expect(await readGatewayPrivateKey({ db, secrets: first })).toBe('the-gateway-private-key');
  const other = createSecretBox(randomBytes(32));
  await expect(readGatewayPrivateKey({ db, secrets: other })).rejects.toThrow(KEY_MISMATCH_MESSAGE);
});
