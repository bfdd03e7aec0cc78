import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '@postern/server/src/app.js';
import { bootstrap } from '@postern/server/src/bootstrap.js';
import { openSqliteStore } from '@postern/server/src/db/client.js';
import { loadDesiredState, loadScopedState } from '@postern/server/src/db/desired-state.js';
import { createLeases } from '@postern/server/src/cluster/leases.js';
import { resolveMigrationsDir } from '@postern/server/src/db/migrations-dir.js';
import { renderOptionsFor } from '@postern/server/src/dataplane/index.js';
import { createOfflineDataPlane, type OfflineDataPlane } from '@postern/server/src/dataplane/offline.js';
import { dataPlaneConfigFor, gatewaySettingsFor } from '@postern/server/src/create-data-plane.js';
import type { AppDeps } from '@postern/server/src/deps.js';
import { createAuditLog } from '@postern/server/src/modules/audit/recorder.js';
import { registerGateway } from '@postern/server/src/modules/gateways/registry.js';
import { parseConfig } from '@postern/server/src/env.js';
import { createSecretBox } from '@postern/server/src/secrets.js';
import { seedNodesAndServices } from './api-seed.js';

// The servers the API benchmark measures: the real app (with the data plane's I/O off, so no root is needed)
// over a seeded database, and a bare Fastify route as the baseline. Both on 127.0.0.1 only.

export interface BenchApp {
  app: FastifyInstance;
  deps: AppDeps;
  dataPlane: OfflineDataPlane;
  config: ReturnType<typeof parseConfig>;
  /** A console session token of the bootstrap admin. */
  token: string;
  seedSeconds: number;
  close(): Promise<void>;
}

export interface BenchDeps {
  deps: AppDeps;
  dataPlane: OfflineDataPlane;
  config: ReturnType<typeof parseConfig>;
  seedSeconds: number;
}

/**
 * The app's dependencies over `size` nodes and `services` HTTP services (default: as many as nodes), no app. The
 * offline data plane reads a change's scope alone, as the gateway's does (create-data-plane.ts).
 */
export async function openBenchDeps(dataDir: string, size: number, services = size): Promise<BenchDeps> {
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
  // SQLite: every lease is this process's (no row, nothing to start or release).
  const leases = createLeases(db);
  const deps: AppDeps = { ...base, dataPlane, now, audit: createAuditLog({ db, now }), gateway: identity, leases };
  await bootstrap(deps, () => undefined);
  const seedSeconds = seedNodesAndServices(deps, size, services);
  return { deps, dataPlane, config, seedSeconds };
}

/** The app over `size` nodes and `services` HTTP services (default: as many as nodes). */
export async function startBenchApp(dataDir: string, size: number, services = size): Promise<BenchApp> {
  const { deps, dataPlane, config, seedSeconds } = await openBenchDeps(dataDir, size, services);
  const { db } = deps;
  const app = await buildApp(deps, { consoleDir: null });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const token = await signIn(app, config);
  return {
    app,
    deps,
    dataPlane,
    config,
    token,
    seedSeconds,
    async close() {
      await app.close();
      await dataPlane.stop({ keepServing: false });
      await db.close();
    },
  };
}

/** A console session token of the bootstrap admin. */
export async function signIn(app: FastifyInstance, config: ReturnType<typeof parseConfig>): Promise<string> {
  const login = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username: config.adminUsername, password: config.adminPassword },
  });
  return login.json<{ token: string }>().token;
}

/**
 * What a full run starts from, for the benches that time its phases one by one: the gateway's settings, the desired
 * state's read as the gateway makes it, the render options and the static hosts the plan takes.
 */
export function fullRunInputs({ deps, config }: Pick<BenchDeps, 'deps' | 'config'>) {
  const gateway = gatewaySettingsFor(config, deps.gateway);
  return {
    gateway,
    read: () => loadDesiredState({ db: deps.db, secrets: deps.secrets }, gateway),
    render: renderOptionsFor(dataPlaneConfigFor(config, deps.gateway)),
    staticHosts: new Map([['localhost', '127.0.0.1']]),
  };
}

export async function startBareRoute(): Promise<FastifyInstance> {
  const bare = Fastify({ logger: false });
  bare.get('/bare', () => ({ status: 'ok' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  return bare;
}

/**
 * A bare route that answers a fixed body with fixed headers (the list's own answer, taken once): the floor a list
 * answer of that size and those headers costs without any of the app's work (bench/README.md, api.ts).
 */
export async function startAnswerRoute(body: string, headers: Record<string, string>): Promise<FastifyInstance> {
  const server = Fastify({ logger: false });
  server.get('/answer', (_request, reply) => reply.headers(headers).send(body));
  await server.listen({ host: '127.0.0.1', port: 0 });
  return server;
}

export const urlOf = (server: FastifyInstance, path: string): string => {
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('server is not listening on TCP');
  return `http://127.0.0.1:${address.port}${path}`;
};
