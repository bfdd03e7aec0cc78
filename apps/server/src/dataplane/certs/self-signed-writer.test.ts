import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdThreadPool, withinDeadline } from '../../test/thread-pool.js';
import { createPemFiles } from './pem-files.js';
import { createSelfSignedWriter } from './self-signed-writer.js';

// A new domain's certificate step on a change's path: made and written on the main thread, so it costs what it does
// whatever holds libuv's pool meanwhile (a boot's or a drift check's file reads, another file's fsync).

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'postern-writer-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('self-signed writer', () => {
  it("ensures a new domain's PEM while every thread of libuv's pool is held, readable by its owner only", async () => {
    const certsDir = join(dir, 'certs');
    const pems = createPemFiles({ certsDir, fallbackHost: 'gateway.example.com' });
    const told: string[] = [];
    const writer = createSelfSignedWriter({
      pems,
      logger: silent,
      now: Date.now,
      onInstalled: (name) => told.push(name),
    });
    const release = holdThreadPool(dir);
    let facts;
    try {
      facts = await withinDeadline(writer.ensureServable('new.example.com', false), 10_000);
    } finally {
      await release();
    }
    if (facts === 'still waiting') throw new Error('the certificate step waited for the thread pool');
    const pem = await readFile(pems.pathOf('new.example.com'), 'utf8');
    expect(new X509Certificate(pem).fingerprint256).toBe(facts.fingerprint);
    expect(new X509Certificate(pem).checkHost('new.example.com')).toBe('new.example.com');
    expect((await stat(pems.pathOf('new.example.com'))).mode & 0o777).toBe(0o600);
    // Renamed into place: no temp file left beside it. A first PEM is pushed by the reconciler that asked, not told of.
    expect(await readdir(certsDir)).toEqual(['new.example.com.pem']);
    expect(told).toEqual([]);
  });
});
