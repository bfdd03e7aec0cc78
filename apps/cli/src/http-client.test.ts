import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayCertificateError } from './errors.js';
import { makeCertificate, makeToken, startAgentServer, type TestCertificate, type TestServer } from './fixtures.js';
import { createHttpClient } from './http-client.js';

// TLS as the CLI does it, against a local HTTPS server with a certificate made here: CA validation, pinning, and
// that nothing (the token least of all) reaches a server whose certificate did not pass.

const emptyList = { status: 200, body: { data: [], page: 1, limit: 100, total: 0 } };
let certificate: TestCertificate;
let other: TestCertificate;
let server: TestServer | undefined;

beforeAll(async () => {
  // Names gateway.test only: the pin alone must make https://127.0.0.1 acceptable.
  certificate = await makeCertificate('gateway.test');
  other = await makeCertificate('gateway.test');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const get = (url: string, pin?: string) =>
  createHttpClient(pin === undefined ? {} : { pin })({
    method: 'GET',
    url: `${url}/api/agent/services/http`,
    headers: { authorization: `Bearer ${makeToken()}` },
    timeoutMs: 5000,
  });

describe('HTTPS to the gateway', () => {
  it('refuses a certificate no CA vouches for, before sending the request, and says how to pin it', async () => {
    server = await startAgentServer(() => emptyList, certificate);
    const call = get(server.url);
    await expect(call).rejects.toBeInstanceOf(GatewayCertificateError);
    await expect(call).rejects.toThrow(
      new RegExp(
        `^The gateway's certificate at ${server.url} is not trusted: it is self-signed \\(DEPTH_ZERO_SELF_SIGNED_CERT\\); nothing was sent\\. .*--pin sha256:.*NODE_EXTRA_CA_CERTS`,
      ),
    );
    expect(server.requests).toEqual([]);
  });

  it('accepts the pinned certificate without CA or host-name checks', async () => {
    server = await startAgentServer(() => emptyList, certificate);
    const answer = await get(server.url, certificate.pin);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ total: 0 });
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /api/agent/services/http',
    ]);
  });

  it('refuses a certificate that does not match the pin, even one it would otherwise accept, sending nothing', async () => {
    server = await startAgentServer(() => emptyList, certificate);
    const call = get(server.url, other.pin);
    await expect(call).rejects.toBeInstanceOf(GatewayCertificateError);
    await expect(call).rejects.toThrow(
      `The gateway at ${server.url} presented a certificate with pin ${certificate.pin}, not the pinned ${other.pin}: nothing was sent.`,
    );
    expect(server.requests).toEqual([]);
  });
});

describe('CA store of the CLI process (NODE_EXTRA_CA_CERTS, read by Node at start)', () => {
  // A fresh Node process with tsx takes seconds on a busy machine: a deadline for hangs, not a speed claim.
  const SPAWN_TIMEOUT_MS = 30_000;

  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'postern-cli-ca-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** `postern services` in a fresh process that trusts `ca`. */
  async function servicesTrusting(
    ca: TestCertificate,
    url: string,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const caFile = path.join(dir, `ca-${Math.random().toString(36).slice(2)}.pem`);
    await writeFile(caFile, ca.cert);
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          main,
          'services',
          '--url',
          url,
          '--token',
          makeToken(),
          '--config-dir',
          path.join(dir, 'cfg'),
        ],
        // The package's own directory: `--import tsx` resolves from the working directory (the test command runs at the
        // root).
        {
          env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: caFile },
          timeout: SPAWN_TIMEOUT_MS,
          cwd: fileURLToPath(new URL('..', import.meta.url)),
        },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
      );
    });
  }

  it(
    'trusts a gateway whose certificate chains to an extra CA and names the URL host',
    { timeout: SPAWN_TIMEOUT_MS },
    async () => {
      const trusted = await makeCertificate('gateway.test', 'IP:127.0.0.1');
      server = await startAgentServer(() => emptyList, trusted);
      const result = await servicesTrusting(trusted, server.url);
      expect(result, result.stderr).toMatchObject({
        code: 0,
        stdout: expect.stringContaining('No services yet') as unknown,
      });
    },
  );

  it('still checks that the certificate names the host of the URL', { timeout: SPAWN_TIMEOUT_MS }, async () => {
    const wrongName = await makeCertificate('gateway.test', 'DNS:gateway.test');
    server = await startAgentServer(() => emptyList, wrongName);
    const result = await servicesTrusting(wrongName, server.url);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^postern: The gateway's certificate at https:\/\/127\.0\.0\.1:\d+ is not trusted: Hostname\/IP does not match certificate's altnames: IP: 127\.0\.0\.1 is not in the cert's list/,
    );
    expect(server.requests).toEqual([]);
  });
});
