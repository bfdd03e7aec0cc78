// The create path at N rows, in-process (bench/README.md "create-path.ts"): N HTTPS services (one per domain, with
// their certificate records) seeded straight into SQLite, the app over the offline data plane with scoped reads (the
// real reconciler and planner, no nginx), then BENCH_CHANGES services created on new domains through app.inject, one
// after another as bench/apply.ts does. Prints the API answer (p50, max), CPU per change, and the CPU of the whole
// series with the background work it caused (the health checker started with a probe that answers at once:
// BENCH_HEALTH=0 leaves it stopped, the baseline). Note: the offline data plane merges each scoped read into its
// copy of the whole state (O(n) a change, ~28 ms at 100,000): compare sizes and builds, not absolute figures.
// No root, no network. Usage: tsx create-path.ts 1000,100000
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildApp } from '@postern/server/src/app.js';
import { bootstrap } from '@postern/server/src/bootstrap.js';
import { openSqliteStore, sqliteClientOf } from '@postern/server/src/db/client.js';
import { loadDesiredState, loadScopedState } from '@postern/server/src/db/desired-state.js';
import { createLeases } from '@postern/server/src/cluster/leases.js';
import { resolveMigrationsDir } from '@postern/server/src/db/migrations-dir.js';
import { renderOptionsFor } from '@postern/server/src/dataplane/index.js';
import { createOfflineDataPlane } from '@postern/server/src/dataplane/offline.js';
import { dataPlaneConfigFor, gatewaySettingsFor } from '@postern/server/src/create-data-plane.js';
import type { AppDeps } from '@postern/server/src/deps.js';
import { createAuditLog } from '@postern/server/src/modules/audit/recorder.js';
import { registerGateway } from '@postern/server/src/modules/gateways/registry.js';
import { parseConfig } from '@postern/server/src/env.js';
import { createSecretBox } from '@postern/server/src/secrets.js';
import { median } from './lib/stats.js';

const SIZES = (process.argv[2] ?? '1000,100000').split(',').map(Number);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 30);

async function measure(size: number): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'postern-probe-create-'));
  const config = parseConfig({
    POSTERN_DATA_DIR: dataDir,
    POSTERN_ADMIN_PASSWORD: randomBytes(18).toString('base64url'),
    POSTERN_PUBLIC_HOST: 'gateway.bench.test',
    POSTERN_DATAPLANE: 'off',
  });
  const db = openSqliteStore(join(dataDir, 'postern.db'), resolveMigrationsDir());
  const base = { config, db, secrets: createSecretBox(randomBytes(32)) };
  const now = () => new Date();
  const identity = await registerGateway({ ...base, now }, { name: 'bench', endpoint: config.wgEndpoint });
  const gateway = gatewaySettingsFor(config, identity);
  const dataPlane = createOfflineDataPlane({
    loadDesiredState: () => loadDesiredState(base, gateway),
    loadScopedState: (scope) => loadScopedState(base, scope),
    render: renderOptionsFor(dataPlaneConfigFor(config, identity)),
  });
  const deps: AppDeps = {
    ...base,
    dataPlane,
    now,
    audit: createAuditLog({ db, now }),
    gateway: identity,
    leases: createLeases(db),
  };
  await bootstrap(deps, () => undefined);
  const sqlite = sqliteClientOf(db);
  const nodeId = (
    sqlite
      .prepare('INSERT INTO nodes (name, address, public_key, private_key_enc) VALUES (?, ?, ?, ?) RETURNING id')
      .get('n1', '10.44.0.2', randomBytes(32).toString('base64'), base.secrets.encrypt('x')) as { id: number }
  ).id;
  const addDomain = sqlite.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
  const addService = sqlite.prepare(
    `INSERT INTO http_services (node_id, name, domain, path_location, backend_proto, backend_host, backend_port) VALUES (?, ?, ?, '/', 'http', '10.44.0.2', 8080)`,
  );
  const addCert = sqlite.prepare(
    `INSERT INTO certificates (domain_id, state, issuer, not_before, not_after, fingerprint, failures, names) VALUES ((SELECT id FROM domains WHERE domain = ?), 'self-signed', 'CN=x', '2026-01-01T00:00:00.000Z', '2036-01-01T00:00:00.000Z', 'AA', 0, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 0; i < size; i++) {
      const d = `d${i}.bench.test`;
      addDomain.run(d);
      addService.run(nodeId, `bench-${i}`, d);
      addCert.run(d, JSON.stringify([d]));
    }
  })();
  const app = await buildApp(deps, {
    consoleDir: null,
    observe: { healthProbe: () => Promise.resolve({ error: null, latencyMs: 1 }) },
  });
  if (process.env.BENCH_HEALTH !== '0') {
    app.observer.health.start();
    await app.observer.health.refresh();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await app.observer.health.refresh();
    const c = process.cpuUsage(c0);
    console.log(
      `${size}: one read of every health target ${(performance.now() - t0).toFixed(0)} ms, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms`,
    );
  }
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: config.adminUsername, password: config.adminPassword },
  });
  const headers = { authorization: `Bearer ${login.json<{ token: string }>().token}` };
  await dataPlane.start();
  await dataPlane.booted();
  const ms: number[] = [];
  const cpu: number[] = [];
  const loopCpu = process.cpuUsage();
  const loopStart = performance.now();
  for (let r = -3; r < CHANGES; r++) {
    const start = performance.now();
    const c0 = process.cpuUsage();
    const res = await app.inject({
      method: 'POST',
      url: `/api/services/${nodeId}/http`,
      headers,
      payload: { name: `new-${r + 3}`, domain: `new${r + 3}.bench.test`, backendHost: '10.44.0.2', backendPort: 8080 },
    });
    if (res.statusCode >= 300) throw new Error(res.body);
    const used = process.cpuUsage(c0);
    if (r >= 0) {
      ms.push(performance.now() - start);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  await app.observer.health.list();
  const loopUsed = process.cpuUsage(loopCpu);
  console.log(
    `${size}: ${CHANGES} changes and the health reads they caused: ${(performance.now() - loopStart).toFixed(0)} ms, CPU ${((loopUsed.user + loopUsed.system) / 1000).toFixed(0)} ms`,
  );
  console.log(
    `${size}: API p50 ${median(ms).toFixed(1)} ms, CPU p50 ${median(cpu).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
}

for (const size of SIZES) await measure(size);
