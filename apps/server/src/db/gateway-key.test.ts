import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { generateKeyPair } from '../dataplane/wireguard/keys.js';
import { registerGateway } from '../modules/gateways/registry.js';
import { createSecretBox } from '../secrets.js';
import { openSqliteStore, type Store } from './client.js';
import { KEY_MISMATCH_MESSAGE, LEGACY_GATEWAY_KEY_SETTING, readGatewayPrivateKey } from './gateway-key.js';
import { resolveMigrationsDir } from './migrations-dir.js';
import { settings } from './schema.js';

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

const config = { vpnSubnet: '10.44.0.0/16' };
const now = () => new Date();

test('a gateway whose secret key did not write the database refuses to start, and says why', async () => {
  const first = createSecretBox(randomBytes(32));
  const gateway = await registerGateway({ db, secrets: first, config, now }, { name: 'gw-a', endpoint: 'gw.test:1' });
  const key = await readGatewayPrivateKey({ db, secrets: first }, gateway.id);
  const other = createSecretBox(randomBytes(32));
  await expect(readGatewayPrivateKey({ db, secrets: other }, gateway.id)).rejects.toThrow(KEY_MISMATCH_MESSAGE);
  // At boot: the same gateway restarted with another key, and a second gateway adopting nothing it can read.
  await expect(
    registerGateway({ db, secrets: other, config, now }, { name: 'gw-a', endpoint: 'gw.test:1' }),
  ).rejects.toThrow(KEY_MISMATCH_MESSAGE);
  expect(await readGatewayPrivateKey({ db, secrets: first }, gateway.id)).toBe(key);
});

test('the first gateway on a database from before several gateways refuses a legacy key it cannot read', async () => {
  const writer = createSecretBox(randomBytes(32));
  await db.write(
    async (tx) =>
      await tx
        .insert(settings)
        .values({ key: LEGACY_GATEWAY_KEY_SETTING, value: writer.encrypt(generateKeyPair().privateKey) })
        .run(),
  );
  const other = createSecretBox(randomBytes(32));
  await expect(
    registerGateway({ db, secrets: other, config, now }, { name: 'gw-a', endpoint: 'gw.test:1' }),
  ).rejects.toThrow(KEY_MISMATCH_MESSAGE);
});
