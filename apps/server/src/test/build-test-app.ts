import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import { bootstrap } from '../bootstrap.js';
import { openSqliteStore, type Store } from '../db/client.js';
import { openPostgresStore } from '../db/postgres.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { loadDesiredState, loadScopedState } from '../db/desired-state.js';
import { createLeases } from '../cluster/leases.js';
import { resolveMigrationsDir } from '../db/migrations-dir.js';
import { createOfflineDataPlane, type OfflineDataPlane } from '../dataplane/offline.js';
import { renderOptionsFor } from '../dataplane/index.js';
import { dataPlaneConfigFor, gatewaySettingsFor, offlineNetworkOptionsFor } from '../create-data-plane.js';
import type { AppDeps } from '../deps.js';
import type { NotifierOptions } from '../modules/notifications/notifier.js';
import type { ObserverOptions } from '../modules/observe/observer.js';
import { parseConfig, type Config } from '../env.js';
import { createAuditLog } from '../modules/audit/recorder.js';
import { resolveGatewayName } from '../modules/gateways/name.js';
import { registerGateway } from '../modules/gateways/registry.js';
import { loadSecretBox } from '../secrets.js';
import { watchFieldErrorCodes } from './message-code-check.js';

/**
 * The engine API tests run on: the embedded SQLite (default), or `postgres` (a fresh PostgreSQL database per app; the
 * test command runs the API tests once more that way, vitest.postgres.config.ts).
 */
// eslint-disable-next-line no-restricted-properties -- test setting, read once
export const TEST_STORE = process.env.POSTERN_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

export const TEST_ADMIN = { username: 'admin', password: 'correct-horse-battery' } as const;

export interface TestAppOptions {
  /** Environment overrides, as POSTERN_* variables (validated like at boot). */
  env?: Record<string, string>;
  /** Injected clock (default: real time). */
  now?: () => Date;
  logger?: Logger;
  /**
   * Another gateway on the same PostgreSQL database as `app` (its database and secret key; the other app cleans the
   * database up). Default: a database of its own.
   */
  sameDatabaseAs?: TestApp;
  /** On a PostgreSQL database of its own whatever POSTERN_TEST_STORE says (tests of several gateways). */
  postgres?: boolean;
  /** The URL the app connects with, given its database's (e.g. through a proxy the test can cut). */
  databaseUrlFor?: (url: string) => string;
  /** Traffic, health and metrics options of the app (e.g. a fake health probe). */
  observe?: ObserverOptions;
  /** A console build to serve (default: none, so unknown pages are JSON 404s). */
  consoleDir?: string;
  /** Notification timings, where messages may go, the health they read (docs/api.md "Notifications"). */
  notifications?: NotifierOptions;
}

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  db: Store;
  config: Config;
  dataDir: string;
  /** The data plane with its I/O off: real planner and renderers, adapters that record what they were told. */
  fakeDataPlane: OfflineDataPlane;
  /** The PostgreSQL database this app made (null on SQLite, or when it shares another app's). */
  database: TestDatabase | null;
  /** Signs in as the bootstrap admin and returns the session token. */
  login(): Promise<string>;
  /** Closes the app and the DB and removes the temp data dir. */
  cleanup(): Promise<void>;
}

/** A fresh app over a temp data dir (own DB, key file) and the data plane with its I/O off. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postern-test-'));
  const config = parseConfig({
    NODE_ENV: 'test',
    POSTERN_DATA_DIR: dataDir,
    POSTERN_ADMIN_USERNAME: TEST_ADMIN.username,
    POSTERN_ADMIN_PASSWORD: TEST_ADMIN.password,
    POSTERN_PUBLIC_HOST: 'gateway.test',
    POSTERN_DATAPLANE: 'off',
    ...options.env,
  });
  const shared = options.sameDatabaseAs?.database ?? null;
  if (options.sameDatabaseAs)
    copyFileSync(join(options.sameDatabaseAs.dataDir, 'secret.key'), join(dataDir, 'secret.key'));
  const wantsPostgres = TEST_STORE === 'postgres' || options.postgres === true;
  const database = shared ? null : wantsPostgres ? await createTestDatabase() : null;
  const url = shared?.url ?? database?.url;
  const db = url
    ? await openPostgresStore(options.databaseUrlFor?.(url) ?? url, { maxConnections: 4 })
    : openSqliteStore(join(dataDir, 'postern.db'), resolveMigrationsDir());
  const secrets = loadSecretBox({ dataDir, keyFile: config.secretKeyFile });
  const base = { config, db, secrets };
  const now = options.now ?? (() => new Date());
  const identity = await registerGateway(
    { ...base, now },
    { name: resolveGatewayName(config.gatewayName, dataDir), endpoint: config.wgEndpoint },
  );
  const gateway = gatewaySettingsFor(config, identity);
  const fakeDataPlane = createOfflineDataPlane({
    loadDesiredState: async () => await loadDesiredState(base, gateway),
    loadScopedState: async (scope) => await loadScopedState(base, scope),
    render: renderOptionsFor(dataPlaneConfigFor(config, identity)),
    network: offlineNetworkOptionsFor(config),
  });
  const leases = createLeases(db, { leaseMs: config.leaseMs });
  await leases.start();
  const deps: AppDeps = {
    ...base,
    dataPlane: fakeDataPlane,
    now,
    audit: createAuditLog({ db, now }),
    gateway: identity,
    leases,
  };
  await bootstrap(deps, () => undefined);
  const app = await buildApp(deps, {
    consoleDir: options.consoleDir ?? null,
    // Only where a test gives one (POSTERN_NODE_CLIENT_DIR): a client built in the checkout must not change answers.
    nodeClientDir: config.nodeClientDir ?? null,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
    ...(options.notifications ? { notifications: options.notifications } : {}),
  });
  watchFieldErrorCodes(app);
  await app.ready();

  return {
    app,
    deps,
    db,
    config,
    dataDir,
    fakeDataPlane,
    database,
    async login() {
      const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN });
      if (response.statusCode !== 200) throw new Error(`test login failed: ${response.statusCode} ${response.body}`);
      return response.json<{ token: string }>().token;
    },
    async cleanup() {
      await app.close();
      await fakeDataPlane.stop({ keepServing: false });
      await leases.release();
      await db.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
