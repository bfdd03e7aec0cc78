import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSelfSignedPem } from '../../dataplane/certs/self-signed.js';
import { runCommand } from '../../dataplane/exec.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createTestCa } from '../../test/certificates.js';
import { VERSION } from '../../app.js';
import { consoleCertificatePath } from './console-certificate.js';

const nodeInstall = {
  script: false,
  image: `ghcr.io/postern/node:${VERSION}`,
  chart: 'oci://ghcr.io/postern/charts/postern-node',
  chartVersion: VERSION,
};

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

async function signIn(env: Record<string, string> = {}): Promise<{ authorization: string }> {
  t = await buildTestApp({ env });
  return { authorization: `Bearer ${await t.login()}` };
}

function placeConsoleCertificate(dataDir: string, pem: string): void {
  mkdirSync(join(dataDir, 'certs'), { recursive: true });
  writeFileSync(consoleCertificatePath(dataDir), pem);
}

/** The pin computed by openssl, not by the code under test: SHA-256 of the DER SubjectPublicKeyInfo. */
async function opensslPin(pem: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'postern-pin-'));
  try {
    await writeFile(join(dir, 'cert.pem'), pem);
    await runCommand('openssl', [
      'x509',
      '-in',
      join(dir, 'cert.pem'),
      '-pubkey',
      '-noout',
      '-out',
      join(dir, 'pub.pem'),
    ]);
    await runCommand('openssl', [
      'pkey',
      '-pubin',
      '-in',
      join(dir, 'pub.pem'),
      '-outform',
      'DER',
      '-out',
      join(dir, 'pub.der'),
    ]);
    return `sha256:${createHash('sha256')
      .update(await readFile(join(dir, 'pub.der')))
      .digest('base64')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A combined PEM (key, leaf) whose leaf a separate CA signed. */
async function caSignedPem(): Promise<string> {
  const ca = await createTestCa('Test CA', 2);
  try {
    return await ca.issue('gateway.test', 2);
  } finally {
    await ca.remove();
  }
}

describe('GET /api/system/info', () => {
  it('needs a console session; a node token is not one', async () => {
    const headers = await signIn();
    const node = (await t!.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'n1' } })).json<{
      token: string;
    }>();
    for (const authorization of [undefined, `Bearer ${node.token}`, 'Bearer nonsense']) {
      const response = await t!.app.inject({
        url: '/api/system/info',
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode, authorization).toBe(401);
    }
  });

  it('gives the public HTTPS URL, with the port when it is not 443, and no certificate before there is one', async () => {
    const headers = await signIn();
    const response = await t!.app.inject({ url: '/api/system/info', headers });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ publicUrl: 'https://gateway.test', certificate: null, nodeInstall });
    await t!.cleanup();

    const other = await signIn({ POSTERN_PUBLIC_HOST: '203.0.113.5', POSTERN_HTTPS_PORT: '9443' });
    expect((await t!.app.inject({ url: '/api/system/info', headers: other })).json()).toMatchObject({
      publicUrl: 'https://203.0.113.5:9443',
    });
  });

  it('gives the pin of the self-signed certificate nginx serves for the console host, never its key', async () => {
    const headers = await signIn();
    const pem = await createSelfSignedPem('gateway.test');
    placeConsoleCertificate(t!.dataDir, pem);
    const response = await t!.app.inject({ url: '/api/system/info', headers });
    expect(response.json()).toEqual({
      publicUrl: 'https://gateway.test',
      certificate: { selfSigned: true, pin: await opensslPin(pem) },
      nodeInstall,
    });
    expect(response.body).not.toContain('PRIVATE KEY');
  });

  it('marks a CA-issued certificate as not self-signed', async () => {
    const headers = await signIn();
    const pem = await caSignedPem();
    placeConsoleCertificate(t!.dataDir, pem);
    expect((await t!.app.inject({ url: '/api/system/info', headers })).json()).toEqual({
      publicUrl: 'https://gateway.test',
      certificate: { selfSigned: false, pin: await opensslPin(pem) },
      nodeInstall,
    });
  });

  it('still gives the URL when the certificate file is damaged', async () => {
    const headers = await signIn();
    placeConsoleCertificate(t!.dataDir, '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n');
    const response = await t!.app.inject({ url: '/api/system/info', headers });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ publicUrl: 'https://gateway.test', certificate: null, nodeInstall });
  });

  it("names the node image and chart under POSTERN_RELEASE_REGISTRY (a fork's registry)", async () => {
    const headers = await signIn({ POSTERN_RELEASE_REGISTRY: 'registry.example.com:5000/team' });
    expect((await t!.app.inject({ url: '/api/system/info', headers })).json()).toMatchObject({
      nodeInstall: {
        image: `registry.example.com:5000/team/node:${VERSION}`,
        chart: 'oci://registry.example.com:5000/team/charts/postern-node',
      },
    });
  });
});
