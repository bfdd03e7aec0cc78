import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCertificateManager, createMemoryCertificateStore, type CertificateManager } from '../certs/manager.js';
import type { ControlClient } from '../nginx/control-client.js';
import { CertificatePusher } from '../proxy/certificates.js';
import type { DictionaryGrowth } from '../proxy/growth.js';
import { NginxHolds } from '../proxy/held.js';
import type { DataPlaneLogger, DesiredDomain } from '../types.js';
import { createCertificateSync } from './certificates.js';

// A restart takes the `certificates` records' word for the PEMs on disk (certs/recorded.ts) and checks each file as
// the push reads it: here with the real certificate manager and pusher, nginx's control socket a stub that keeps
// what it is handed.

const silent: DataPlaneLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
const DAY = 24 * 3600 * 1000;

/** nginx's certificate dictionary as POST /certs leaves it (name → PEM). */
class NginxStub implements ControlClient {
  readonly certs = new Map<string, string>();
  get<T>(): Promise<T> {
    return Promise.resolve({ version: null, hosts: {}, certs: {}, cert_bytes: {} } as T);
  }
  post<T>(_path: string, body: unknown): Promise<T> {
    const { set = {}, del = [] } = body as { set?: Record<string, string>; del?: string[] };
    for (const [name, pem] of Object.entries(set)) this.certs.set(name, pem);
    for (const name of del) this.certs.delete(name);
    return Promise.resolve({} as T);
  }
}

let dataDir: string;
const managers: CertificateManager[] = [];
const pemFile = (name: string): string => join(dataDir, 'certs', `${name}.pem`);
const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;
const domains: DesiredDomain[] = [
  'a.example.com',
  'b.example.com',
  'c.example.com',
  'd.example.com',
  'e.example.com',
].map((domain, i) => ({
  domainId: i + 1,
  domain,
  ssl: 'self-signed',
}));

/**
 * A gateway's control plane: the manager over `store` and the reconciler's certificate sync, before a first apply.
 * `pushReads`: the directory the push reads PEMs from (the manager's by default).
 */
function gateway(
  store: ReturnType<typeof createMemoryCertificateStore>,
  now = Date.now,
  pushReads = join(dataDir, 'certs'),
) {
  const manager = createCertificateManager({
    dataDir,
    acme: {},
    store,
    logger: silent,
    now,
    issuer: { issue: () => Promise.reject(new Error('no CA here')) },
    challenges: { set: () => Promise.resolve(), remove: () => Promise.resolve() },
  });
  managers.push(manager);
  const nginx = new NginxStub();
  const growth = { needs: { gw_routes: 0, gw_certs: 0, gw_stats: 0 }, grow: () => Promise.resolve(false) };
  const pusher = new CertificatePusher(nginx, pushReads, new NginxHolds(nginx), growth as unknown as DictionaryGrowth);
  const sync = createCertificateSync(manager, {
    publishCertificates: (names, given) => pusher.publish(names, given),
    unpublishCertificates: (names) => pusher.unpublish(names),
  });
  return { manager, nginx, sync };
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'postern-cert-sync-'));
});
afterEach(async () => {
  for (const manager of managers.splice(0)) manager.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a new domain', () => {
  // Read back through libuv's pool, the PEM waited behind a boot's or a drift check's work there (bench/README.md).
  it('is handed to nginx as its certificate was made, not read back from disk', async () => {
    const { nginx, sync } = gateway(createMemoryCertificateStore(), Date.now, join(dataDir, 'not-read'));
    await sync.ensureChanged(domains.slice(0, 2));
    for (const { domain } of domains.slice(0, 2))
      expect(nginx.certs.get(domain)).toBe(await readFile(pemFile(domain), 'utf8'));
  });
});

describe('certificates at a restart', () => {
  it('makes a new certificate for a domain whose PEM was deleted, corrupted, emptied or cut short, and leaves the others as they were', async () => {
    const store = createMemoryCertificateStore();
    const first = gateway(store);
    await first.sync.ensureChanged(domains);
    const before = new Map(
      await Promise.all(domains.map(async (d) => [d.domain, await readFile(pemFile(d.domain), 'utf8')] as const)),
    );
    const untouched = await stat(pemFile('c.example.com'));

    await rm(pemFile('a.example.com'));
    await writeFile(pemFile('b.example.com'), 'not a certificate\n');
    // What a power cut can leave of a PEM written without fsync (certs/self-signed-writer.ts): nothing, or part of it.
    await writeFile(pemFile('d.example.com'), '');
    await writeFile(pemFile('e.example.com'), (before.get('e.example.com') ?? '').slice(0, -200));
    const restarted = gateway(store);
    await restarted.sync.ensureChanged(domains);

    for (const name of ['a.example.com', 'b.example.com', 'd.example.com', 'e.example.com']) {
      const pem = await readFile(pemFile(name), 'utf8');
      expect(pem).not.toBe(before.get(name));
      expect(new X509Certificate(pem).checkHost(name)).toBe(name);
      // nginx serves the new one, and the record describes it.
      expect(restarted.nginx.certs.get(name)).toBe(pem);
      expect(restarted.manager.info(name)?.fingerprint).toBe(fingerprintOf(pem));
    }
    expect(restarted.nginx.certs.get('c.example.com')).toBe(before.get('c.example.com'));
    expect((await stat(pemFile('c.example.com'))).mtimeMs).toBe(untouched.mtimeMs);
  });

  it('still renews a self-signed certificate whose record says it is due, and takes the others from the records', async () => {
    const store = createMemoryCertificateStore();
    const first = gateway(store);
    await first.sync.ensureChanged(domains);
    const old = await readFile(pemFile('a.example.com'), 'utf8');
    const untouched = await stat(pemFile('b.example.com'));
    // Its record (and PEM) expire in 10 days: within the renewal window.
    const record = store.records.get('a.example.com');
    if (!record) throw new Error('no record');
    store.records.set('a.example.com', { ...record, notAfter: new Date(Date.now() + 10 * DAY).toISOString() });

    const restarted = gateway(store);
    await restarted.sync.ensureChanged(domains);
    const renewed = await readFile(pemFile('a.example.com'), 'utf8');
    expect(renewed).not.toBe(old);
    expect(restarted.nginx.certs.get('a.example.com')).toBe(renewed);
    expect((await stat(pemFile('b.example.com'))).mtimeMs).toBe(untouched.mtimeMs);
    expect([...restarted.nginx.certs.keys()].sort()).toEqual(domains.map((d) => d.domain));
  });
});
