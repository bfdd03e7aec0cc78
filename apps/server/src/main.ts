import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildApp } from './app.js';
import { backupBeforeMigrations } from './backup/before-migration.js';
import { isBackupCommand, runBackupCommand } from './backup/command.js';
import { bootstrap } from './bootstrap.js';
import { createDataPlaneFor, domainCheckFor, gatewaySettingsFor } from './create-data-plane.js';
import { openSharedChallenges } from './cluster/acme-answers.js';
import { createLeases } from './cluster/leases.js';
import { openSharedCertificates } from './cluster/shared-certificates.js';
import { openDbCertificateStore } from './db/certificate-store.js';
import { openAcmeSettings } from './db/acme-settings.js';
import { openStore } from './db/open-store.js';
import { DB_FILE } from './backup/archive.js';
import { loadDesiredState, loadScopedState, loadStreamState } from './db/desired-state.js';
import { resolveMigrationsDir, resolvePgMigrationsDir } from './db/migrations-dir.js';
import type { AppDeps } from './deps.js';
import { loadConfig, type Config } from './env.js';
import { warnIfPlainHttpBeyondLoopback } from './http/listen-warning.js';
import { createLogger } from './http/logger.js';
import { createAuditLog } from './modules/audit/recorder.js';
import { resolveGatewayName } from './modules/gateways/name.js';
import { registerGateway } from './modules/gateways/registry.js';
import { gatewayJobs, JobList } from './jobs.js';
import { loadSecretBox, type SecretBox } from './secrets.js';

// Boots the gateway: config, DB, secrets, first-boot state, data plane, HTTP; stops it on a signal. The routes are
// app.ts; every background job, and the order jobs start and stop in, is jobs.ts.

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

/** A key that cannot be used is the operator's to fix: said in one line, like a bad setting, before anything opens. */
function readSecretKey(config: Config, dataDir: string, warn: (message: string) => void): SecretBox {
  try {
    return loadSecretBox({ dataDir, keyFile: config.secretKeyFile, onWarning: warn });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

/** Printed straight to stdout, once: the JSON log may be shipped elsewhere and must never hold a password. */
function announceAdmin(username: string, password: string): void {
  process.stdout.write(
    [
      '',
      '==================================================================',
      ' Postern admin account created',
      `   username: ${username}`,
      `   password: ${password}`,
      ' This password is shown only once. Change it in the console',
      ' (or set POSTERN_ADMIN_PASSWORD before the first boot).',
      '==================================================================',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  const dataDir = resolve(config.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secrets = readSecretKey(config, dataDir, (message) => logger.warn(message));
  const migrationsFolder = resolveMigrationsDir();
  if (config.databaseUrl === undefined) {
    // Created 0600 up front: SQLite gives its -wal/-shm files the database file's mode.
    closeSync(openSync(join(dataDir, DB_FILE), 'a', 0o600));
    const bootBackup = await backupBeforeMigrations({ dataDir, migrationsFolder, keep: config.backupKeep });
    if (bootBackup) logger.info({ archive: bootBackup }, 'backed up the data directory before migrating the database');
  } else {
    logger.info("database: PostgreSQL (POSTERN_DATABASE_URL); its backups are the database operator's (pg_dump)");
  }
  const db = await openStore(
    { dataDir, databaseUrl: config.databaseUrl },
    { sqlite: migrationsFolder, postgres: resolvePgMigrationsDir() },
    { onIdleError: (err) => logger.warn({ err }, 'database: an idle connection failed; the pool replaces it') },
  );
  const base = { config: { ...config, dataDir }, db, secrets };
  const now = (): Date => new Date();
  // Before the data plane: its WireGuard key and tunnel address are this gateway's row.
  const identity = await registerGateway(
    { ...base, now },
    { name: resolveGatewayName(config.gatewayName, dataDir), endpoint: config.wgEndpoint },
  );
  logger.info({ gateway: identity.name, address: identity.address, endpoint: identity.endpoint }, 'gateway registered');
  // The holder is the gateway's name, so a gateway restarted after SIGKILL resumes its own leases at once.
  const leases = createLeases(db, {
    holder: identity.name,
    leaseMs: config.leaseMs,
    onError: (err) => logger.warn({ err }, 'leases: could not take or renew the run-once jobs; retrying'),
  });
  leases.onChange((name, held) =>
    logger.info({ lease: name, holder: leases.holder }, held ? 'leases: this gateway runs the job' : 'leases: lost'),
  );
  const gateway = gatewaySettingsFor(config, identity);
  const certificateStore = await openDbCertificateStore(
    db,
    (err: unknown) =>
      logger.warn({ err }, 'certificates: could not store a certificate record; retried with the next change'),
    { isHolder: () => leases.holds('certificates') },
  );
  const acmeAnswers = openSharedChallenges(db, {
    gatewayId: identity.id,
    onLate: (token, missing) =>
      logger.warn(
        { token, gateways: missing },
        'certificates: not every gateway said it serves an ACME answer in time',
      ),
  });
  const dataPlane = createDataPlaneFor(base.config, {
    gateway: identity,
    // Every apply (boot, a change announced by another gateway, drift) reads the certificate state the holder of
    // the `certificates` lease wrote, with the rest of the desired state.
    loadDesiredState: async () => {
      await certificateStore.refresh();
      return await loadDesiredState(base, gateway);
    },
    // A change's own rows (dataplane/README.md "Scoped applies").
    loadScopedState: async (scope) => {
      await certificateStore.refresh();
      return await loadScopedState(base, scope);
    },
    // The traffic counters' TCP/UDP instances (every minute): no certificate state needed.
    loadStreamRoutes: () => loadStreamState(base),
    logger,
    certificateStore,
    acmeSettings: openAcmeSettings(db, secrets, {
      directoryUrl: config.acmeDirectory,
      ...(config.acmeEmail ? { email: config.acmeEmail } : {}),
    }),
    shared: {
      certificates: openSharedCertificates(db, secrets),
      challenges: acmeAnswers,
      isHolder: () => leases.holds('certificates'),
      onTaken: (listener) => leases.onChange((name, held) => held && name === 'certificates' && listener()),
    },
  });
  const deps: AppDeps = { ...base, dataPlane, now, audit: createAuditLog({ db, now }), gateway: identity, leases };
  await bootstrap(deps, announceAdmin);

  const app = await buildApp(deps, {
    logger,
    // A certbot domain must point here before a CA is asked (the data plane off: nothing answers, so accept).
    ...(config.dataPlane === 'real' ? { checkDomain: domainCheckFor(base.config, dataPlane.challenges) } : {}),
  });
  // SIGTERM (systemd, docker, kill, an upgrade): only the control plane stops; nginx and the tunnel go on serving
  // and the next start adopts them, so a restart cuts nothing. SIGINT (Ctrl-C, or the start command's supervisor
  // shutting the gateway down): everything stops.
  let keepServing = false;
  const jobs = new JobList(
    gatewayJobs({ leases, certificateStore, acmeAnswers, dataPlane, keepServing: () => keepServing }),
    (name, err) => logger.warn({ err, job: name }, 'a background job did not stop cleanly'),
  );
  await jobs.startAll();
  await app.listen({ host: config.host, port: config.port });
  warnIfPlainHttpBeyondLoopback(logger, app.addresses());

  let isClosing = false;
  const close = (signal: string): void => {
    if (isClosing) return;
    isClosing = true;
    keepServing = signal === 'SIGTERM';
    logger.info({ signal, dataPlane: keepServing ? 'keeps serving' : 'stops' }, 'shutting down');
    const done = async () => {
      await app.close();
      await jobs.stopAll();
      await db.close();
    };
    done().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => close('SIGTERM'));
  process.once('SIGINT', () => close('SIGINT'));
}

const [command, ...commandArgs] = process.argv.slice(2);
if (isBackupCommand(command)) {
  // exitCode, not exit(): `backup -` must finish writing the archive to stdout first.
  runBackupCommand(command, commandArgs).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${command} failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  main().catch((error: unknown) => {
    process.stderr.write(
      `postern failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
