import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTestApp, TEST_ADMIN } from '../test/build-test-app.js';
import { getGatewayPrivateKey } from './desired-state.js';

// A copy of the database alone must reveal no secret: every file of the data dir except the key file is
// searched for each plaintext secret the API ever handed out.

describe('secrets at rest', () => {
  it('the database files hold no plaintext token, password or private key', async () => {
    const t = await buildTestApp();
    try {
      const headers = { authorization: `Bearer ${await t.login()}` };
      const secrets: string[] = [TEST_ADMIN.password];
      const newPassword = 'the-second-admin-password';
      await t.app.inject({ method: 'PATCH', url: '/api/auth/password', headers, payload: { currentPassword: TEST_ADMIN.password, newPassword } });
      secrets.push(newPassword);
      for (let i = 0; i < 3; i++) {
        const node = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: `n${i}` } })).json();
        secrets.push(node.token);
        const pat = (await t.app.inject({ method: 'POST', url: `/api/nodes/${node.id}/pats`, headers, payload: { name: 'extra' } })).json();
        secrets.push(pat.token);
        const config = (await t.app.inject({ url: `/api/nodes/${node.id}/download`, headers })).body;
        for (const match of config.matchAll(/^(?:PrivateKey|PresharedKey) = (\S+)$/gm)) secrets.push(match[1] ?? '');
      }
      secrets.push(headers.authorization.slice('Bearer '.length), getGatewayPrivateKey(t.deps));
      t.db.$client.pragma('wal_checkpoint(TRUNCATE)');
      const files = readdirSync(t.dataDir).filter((f) => f !== 'secret.key');
      expect(files).toContain('postern.db');
      const dump = files.map((f) => readFileSync(join(t.dataDir, f)).toString('latin1')).join('\n');
      expect(secrets.length).toBe(2 + 3 * 4 + 2);
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(10);
        expect(dump.includes(secret), `plaintext secret found: ${secret.slice(0, 8)}…`).toBe(false);
        // Base64 keys could also sit in the file as raw bytes.
        if (/^[A-Za-z0-9+/]{43}=$/.test(secret)) expect(dump.includes(Buffer.from(secret, 'base64').toString('latin1'))).toBe(false);
      }
      expect(statSync(join(t.dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    } finally {
      await t.cleanup();
    }
  });
});
