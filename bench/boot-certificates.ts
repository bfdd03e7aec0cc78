// The boot's certificate step in-process (bench/README.md "boot-certificates.ts"): N domains whose PEMs a restarted
// gateway finds on disk with their `certificates` records, through the real certificate manager and the reconciler's
// certificate sync, pushed by the real CertificatePusher into a control socket stub that takes every part (so nginx's
// own work is not counted). Prints the wall time and the CPU seconds of the step, the parts pushed, and, with
// BENCH_DAMAGE=1, that a deleted and a corrupted PEM are found and replaced while the others are left as they were.
// No root, no nginx. `tsx boot-certificates.ts 100000` (default 20,000; BENCH_CERT_CACHE=<dir> keeps the PEMs);
// BENCH_CPU_PROF=<file> writes a V8 CPU profile of the step alone.
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateManager, createMemoryCertificateStore } from '@postern/server/src/dataplane/certs/manager.js';
import { selfSignedRecord } from '@postern/server/src/dataplane/certs/renewal.js';
import type { ControlClient } from '@postern/server/src/dataplane/nginx/control-client.js';
import { CertificatePusher } from '@postern/server/src/dataplane/proxy/certificates.js';
import type { DictionaryGrowth } from '@postern/server/src/dataplane/proxy/growth.js';
import { NginxHolds } from '@postern/server/src/dataplane/proxy/held.js';
import { createCertificateSync } from '@postern/server/src/dataplane/reconcile/certificates.js';
import type { DataPlaneLogger, DesiredDomain } from '@postern/server/src/dataplane/types.js';
import { benchDomain, makeCertificates } from './lib/seed-services.js';
import { formatMs } from './lib/stats.js';

const SIZE = Number(process.argv[2] ?? 20_000);
const DAMAGE = process.env.BENCH_DAMAGE === '1';

const quiet: DataPlaneLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};

/** What the control socket was sent: parts and bytes. */
class ControlStub implements ControlClient {
  parts = 0;
  bytes = 0;
  get<T>(path: string): Promise<T> {
    if (path === '/digest') return Promise.resolve({ version: null, hosts: {}, certs: {}, cert_bytes: {} } as T);
    return Promise.resolve({} as T);
  }
  post<T>(_path: string, body: unknown): Promise<T> {
    this.parts++;
    this.bytes += JSON.stringify(body).length;
    return Promise.resolve({} as T);
  }
}

const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

async function main(): Promise<void> {
  const keep = process.env.BENCH_CERT_CACHE;
  const cache = keep ?? (await mkdtemp(join(tmpdir(), 'postern-bench-certs-')));
  const dataDir = await mkdtemp(join(tmpdir(), 'postern-bench-boot-'));
  const certsDir = join(dataDir, 'certs');
  try {
    await mkdir(cache, { recursive: true });
    await makeCertificates(cache, SIZE);
    await mkdir(certsDir, { recursive: true });
    const store = createMemoryCertificateStore();
    const domains: DesiredDomain[] = [];
    // Every PEM of the cache has its own certificate (one shared key): the records a gateway that served them keeps.
    for (let i = 0; i < SIZE; i++) {
      const name = benchDomain(i);
      await copyFile(join(cache, `${name}.pem`), join(certsDir, `${name}.pem`));
      const cert = new X509Certificate(await readFile(join(certsDir, `${name}.pem`)));
      store.records.set(
        name,
        selfSignedRecord({
          issuer: cert.issuer.replace(/\n/g, ', '),
          notBefore: new Date(cert.validFrom).toISOString(),
          notAfter: new Date(cert.validTo).toISOString(),
          fingerprint: cert.fingerprint256,
          names: [name],
        }),
      );
      domains.push({ domainId: i + 1, domain: name, ssl: 'self-signed', pemFingerprint: cert.fingerprint256 });
    }
    const stored = new Map(domains.map((d) => [d.domain, d.pemFingerprint ?? null]));
    const damaged = DAMAGE ? [benchDomain(1), benchDomain(2)] : [];
    if (DAMAGE) {
      await rm(join(certsDir, `${benchDomain(1)}.pem`));
      await writeFile(join(certsDir, `${benchDomain(2)}.pem`), 'not a certificate\n');
    }
    const untouched = await stat(join(certsDir, `${benchDomain(3)}.pem`));

    const control = new ControlStub();
    const holds = new NginxHolds(control);
    const growth = { needs: { gw_routes: 0, gw_certs: 0, gw_stats: 0 }, grow: () => Promise.resolve(false) };
    const pusher = new CertificatePusher(control, certsDir, holds, growth as unknown as DictionaryGrowth);
    const pems = new Map<string, string>();
    const manager = createCertificateManager({
      dataDir,
      certsDir,
      challenges: { set: () => Promise.resolve(), remove: () => Promise.resolve() },
      acme: {},
      store,
      logger: quiet,
      issuer: { issue: () => Promise.reject(new Error('no CA here')) },
      shared: {
        // The stored PEM of a damaged domain is gone too: the gateway makes a new one.
        load: (name) => Promise.resolve(damaged.includes(name) ? null : (pems.get(name) ?? null)),
        offer: (name, pem) => {
          pems.set(name, pem);
          return Promise.resolve(pem);
        },
        put: (name, pem) => {
          pems.set(name, pem);
          return Promise.resolve();
        },
      },
    });
    for (const name of damaged) stored.set(name, null);
    const sync = createCertificateSync(manager, {
      publishCertificates: (names, expected) => pusher.publish(names, expected),
      unpublishCertificates: (names) => pusher.unpublish(names),
    });
    const boot = domains.map((d) => ({ ...d, pemFingerprint: stored.get(d.domain) ?? null }));
    const load = loadavg()[0]?.toFixed(1) ?? '?';
    const profiler = process.env.BENCH_CPU_PROF ? new Session() : null;
    profiler?.connect();
    await profiler?.post('Profiler.enable');
    await profiler?.post('Profiler.start');
    const cpu0 = cpuSeconds();
    const t0 = performance.now();
    const ensured = await sync.ensureChanged(boot);
    const ms = performance.now() - t0;
    const cpu = cpuSeconds() - cpu0;
    if (profiler && process.env.BENCH_CPU_PROF) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(process.env.BENCH_CPU_PROF, JSON.stringify(profile));
    }
    console.log(
      `${SIZE} domains: certificates ensured and pushed in ${formatMs(ms)}, ${cpu.toFixed(2)} CPU-s ` +
        `(${((cpu / SIZE) * 1e6).toFixed(0)} µs per domain); ${control.parts} parts, ` +
        `${(control.bytes / 1024 / 1024).toFixed(1)} MB; ${ensured.length} ensured; load average ${load}`,
    );
    if (DAMAGE) {
      for (const name of damaged) {
        const pem = await readFile(join(certsDir, `${name}.pem`), 'utf8');
        const fingerprint = new X509Certificate(pem).fingerprint256;
        console.log(`  ${name}: ${fingerprint === store.get(name)?.fingerprint ? 'replaced' : 'NOT replaced'}`);
      }
      const after = await stat(join(certsDir, `${benchDomain(3)}.pem`));
      console.log(`  ${benchDomain(3)}: ${after.mtimeMs === untouched.mtimeMs ? 'untouched' : 'REWRITTEN'}`);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    if (!keep) await rm(cache, { recursive: true, force: true });
  }
}

await main();
