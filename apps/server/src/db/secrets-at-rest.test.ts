import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../http/logger.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from '../test/build-test-app.js';
import { sqliteClientOf } from './client.js';
import { readGatewayPrivateKey } from './gateway-key.js';

// Secret canaries. A copy of the database alone must reveal no secret: every file of the data dir except the key
// file (on PostgreSQL: every row of every table) is searched for each plaintext secret the API ever handed out. The
// server's log (at trace level) must hold none either, and no answer but the one that hands a secret out may repeat it.

/** Everything the database holds: its files on SQLite, every row of every table as text on PostgreSQL. */
async function databaseDump(t: TestApp): Promise<string> {
  if (t.db.engine === 'postgres') {
    const tables = await t.db.values<[string]>(
      sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    expect(tables.map(([name]) => name)).toContain('nodes');
    const rows = await Promise.all(
      tables.map(([name]) => t.db.values<[string]>(sql`select t::text from ${sql.identifier(name)} t`)),
    );
    return rows.flat(2).join('\n');
  }
  sqliteClientOf(t.db).pragma('wal_checkpoint(TRUNCATE)');
  const files = readdirSync(t.dataDir).filter((f) => f !== 'secret.key');
  expect(files).toContain('postern.db');
  return files.map((f) => readFileSync(join(t.dataDir, f)).toString('latin1')).join('\n');
}

describe('secrets at rest', () => {
  it('the database files, the log and the read answers hold no plaintext token, password or private key', async () => {
    const logLines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    const t = await buildTestApp({ logger: createLogger('trace', sink) });
    try {
      const headers = { authorization: `Bearer ${await t.login()}` };
      const secrets: string[] = [TEST_ADMIN.password];
      const newPassword = 'the-second-admin-password';
      await t.app.inject({
        method: 'PATCH',
        url: '/api/auth/password',
        headers,
        payload: { currentPassword: TEST_ADMIN.password, newPassword },
      });
      secrets.push(newPassword);
      for (let i = 0; i < 3; i++) {
        const node = (
          await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: `n${i}` } })
        ).json();
        secrets.push(node.token);
        const pat = (
          await t.app.inject({ method: 'POST', url: `/api/nodes/${node.id}/pats`, headers, payload: { name: 'extra' } })
        ).json();
        secrets.push(pat.token);
        const config = (await t.app.inject({ url: `/api/nodes/${node.id}/download`, headers })).body;
        for (const match of config.matchAll(/^(?:PrivateKey|PresharedKey) = (\S+)$/gm)) secrets.push(match[1] ?? '');
      }
      secrets.push(
        headers.authorization.slice('Bearer '.length),
        await readGatewayPrivateKey(t.deps, t.deps.gateway.id),
      );
      // Streams carry the session in the URL: that URL is logged, the token in it must not be.
      await t.app.inject({ url: `/api/nodes/stream?id=999&token=${headers.authorization.slice('Bearer '.length)}` });
      const readAnswers: string[] = [];
      for (const url of [
        '/api/nodes',
        '/api/nodes/2',
        '/api/nodes/2/pats',
        '/api/domains',
        '/api/services/http',
        '/api/services/tcp',
        '/api/openapi.json',
      ]) {
        readAnswers.push((await t.app.inject({ url, headers })).body);
      }
      const dump = await databaseDump(t);
      expect(secrets.length).toBe(2 + 3 * 4 + 2);
      const log = logLines.join('');
      expect(log).toContain('/api/nodes/stream');
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(10);
        expect(dump.includes(secret), `plaintext secret found: ${secret.slice(0, 8)}…`).toBe(false);
        expect(log.includes(secret), `secret in the log: ${secret.slice(0, 8)}…`).toBe(false);
        expect(
          readAnswers.some((answer) => answer.includes(secret)),
          `secret in a read answer: ${secret.slice(0, 8)}…`,
        ).toBe(false);
        // Base64 keys could also sit in the file as raw bytes.
        if (/^[A-Za-z0-9+/]{43}=$/.test(secret))
          expect(dump.includes(Buffer.from(secret, 'base64').toString('latin1'))).toBe(false);
      }
      expect(statSync(join(t.dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    } finally {
      await t.cleanup();
    }
  });
});
