import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';

// What a machine fetches to become a node (deploy/install.sh): public, from a fixed list of names, read per request.

let t: TestApp | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A release directory as scripts/build-node-client.sh leaves it, with small stand-ins for the executables. */
function releaseDir(): string {
  dir = mkdtempSync(join(tmpdir(), 'postern-release-'));
  const files: Record<string, string> = {
    'install.sh': '#!/bin/sh\npostern_install() { :; }\n',
    'postern-linux-x64.gz': 'x64 client',
    'postern-linux-arm64.gz': 'arm64 client',
    'postern-node.service': '[Unit]\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const sums = Object.entries(files).map(
    ([name, text]) => `${createHash('sha256').update(text).digest('hex')}  ${name}`,
  );
  writeFileSync(join(dir, 'SHA256SUMS'), `${sums.join('\n')}\n`);
  writeFileSync(join(dir, '.inputs'), 'build stamp');
  return dir;
}

describe('node downloads', () => {
  it('serves install.sh at /install.sh and the client, unit and checksums under /downloads/ without a session', async () => {
    t = await buildTestApp({ env: { POSTERN_NODE_CLIENT_DIR: releaseDir() } });
    const script = await t.app.inject({ url: '/install.sh' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(script.headers['cache-control']).toBe('no-cache');
    expect(script.body).toContain('postern_install()');
    const client = await t.app.inject({ url: '/downloads/postern-linux-arm64.gz' });
    expect([client.statusCode, client.headers['content-type'], client.body]).toEqual([
      200,
      'application/gzip',
      'arm64 client',
    ]);
    expect((await t.app.inject({ url: '/downloads/SHA256SUMS' })).body).toMatch(/ {2}postern-linux-x64\.gz$/m);
    expect(
      (await t.app.inject({ method: 'HEAD', url: '/downloads/postern-linux-x64.gz' })).headers['content-length'],
    ).toBe('10');
    // A rebuilt client is served at once (an upgrade), nothing is cached.
    writeFileSync(join(dir!, 'postern-linux-x64.gz'), 'x64 client, rebuilt');
    expect((await t.app.inject({ url: '/downloads/postern-linux-x64.gz' })).body).toBe('x64 client, rebuilt');
    // The console's answers still know it is there.
    const headers = { authorization: `Bearer ${await t.login()}` };
    expect((await t.app.inject({ url: '/api/system/info', headers })).json()).toMatchObject({
      nodeInstall: { script: true },
    });
  });

  it('serves nothing but the listed names: no other file of the directory, no path out of it', async () => {
    t = await buildTestApp({ env: { POSTERN_NODE_CLIENT_DIR: releaseDir() } });
    for (const url of [
      '/downloads/.inputs',
      '/downloads/..%2f..%2fetc%2fpasswd',
      '/downloads/%2e%2e%2fpostern.db',
      '/downloads/install.sh%00.gz',
      '/downloads/',
      '/downloads/toString',
      '/downloads/__proto__',
    ]) {
      const response = await t.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain('build stamp');
    }
  });

  it('says how to build the client when the gateway was built without it', async () => {
    t = await buildTestApp();
    for (const url of ['/install.sh', '/downloads/SHA256SUMS']) {
      const response = await t.app.inject({ url });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        message: 'This gateway was built without the node client: run bash scripts/build-node-client.sh on it',
        code: 'not_found',
      });
    }
  });
});
