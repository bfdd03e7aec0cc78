import { randomBytes } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../harness/api.js';
import { startGateway, WG_PORT, type Gateway } from '../harness/gateway.js';
import type { Lab } from '../harness/lab.js';
import { killNamespaceProcesses } from '../harness/netns-processes.js';
import { startLabPostgres, type LabPostgres } from '../harness/postgres.js';
import { createSystemTopology, type GatewayHost, type SystemTopology } from '../harness/topology.js';

// Several gateways on one PostgreSQL (docs/SCALE-OUT.md), each on a host of its own:
//
//   client (.2-.4) ──┐                                   ┌── gw-a ns (.1): server, nginx, wireguard-go ── mgmt /30
//   node1 (.11) ─────┼── internet bridge 10.213.B.0/24 ──┼── gw-b ns (.5): the same                     ── mgmt /30
//   pg ns (.20) ─────┘   (PostgreSQL on the bridge)      └── gw-c ns (.6): the same                     ── mgmt /30
//
// Every gateway gets the same database URL and secret key, its own POSTERN_GATEWAY_NAME, and its own public
// address as POSTERN_PUBLIC_HOST and POSTERN_WG_ENDPOINT (what nodes dial). The tests reach each API through that
// gateway's management link.

export const GATEWAY_NAMES = ['gw-a', 'gw-b', 'gw-c'] as const;
export type GatewayName = (typeof GATEWAY_NAMES)[number];
/** Namespace role and internet address of each gateway host (gw-a is the system topology's first gateway). */
const HOSTS: Record<GatewayName, { role: string; index: number }> = {
  'gw-a': { role: 'gw', index: 1 },
  'gw-b': { role: 'gwb', index: 5 },
  'gw-c': { role: 'gwc', index: 6 },
};
const POSTGRES_INDEX = 20;

/**
 * POSTERN_SECRET_KEY_FILE (docs/SCALE-OUT.md, "The secret key") is set on every gateway. Until the server reads it,
 * the same key is also put into each data dir as `secret.key`, which today's server reads (a copy of the first
 * gateway's key, made before any gateway starts). Once the setting has landed, set this to false: the setting alone
 * must then carry the key (a gateway with a key of its own refuses to start on the shared database, db/gateway-key.ts).
 */
const COPY_SECRET_KEY_INTO_DATA_DIRS = false;

export interface ClusterGateway {
  name: GatewayName;
  host: GatewayHost;
  gateway: Gateway;
  /** Signed in as the bootstrap admin on this gateway. */
  api: ApiClient;
  /** SIGKILL of everything on the gateway's host (control plane, nginx, wireguard-go), as a power cut. */
  killHost(): Promise<void>;
}

export interface Cluster {
  lab: Lab;
  topology: SystemTopology;
  postgres: LabPostgres;
  gateways: ClusterGateway[];
  /** The gateway called `name`. */
  gateway(name: GatewayName): ClusterGateway;
  /** How long each part of the start took (ms), for the report of a slow setup. */
  setupMs: Record<string, number>;
}

export interface ClusterOptions {
  /** Whether the shared secret key is also put into each data dir (default: COPY_SECRET_KEY_INTO_DATA_DIRS). */
  copySecretKeyIntoDataDirs?: boolean;
  /** Runs once the hosts exist, before any gateway starts; returns environment every gateway gets (e.g. ACME). */
  prepare?: (topology: SystemTopology, hosts: GatewayHost[]) => Promise<Record<string, string>>;
}

export async function startCluster(lab: Lab, options: ClusterOptions = {}): Promise<Cluster> {
  const setupMs: Record<string, number> = {};
  let phase = performance.now();
  const done = (name: string): void => {
    setupMs[name] = Math.round(performance.now() - phase);
    phase = performance.now();
  };
  const topology = await createSystemTopology(lab);
  const { internet } = topology;
  const hosts: GatewayHost[] = [
    { ns: topology.gatewayNs, publicIp: topology.gatewayPublicIp, mgmtIp: topology.gatewayMgmtIp },
    ...(await Promise.all(
      GATEWAY_NAMES.slice(1).map((name) => topology.addGateway(HOSTS[name].role, HOSTS[name].index)),
    )),
  ];
  const pgHost = await topology.addHost('pg', POSTGRES_INDEX);
  done('namespaces');
  const [postgres, extraEnv] = await Promise.all([
    startLabPostgres(lab, pgHost.ns, {
      listen: { address: pgHost.publicIp, trust: `${internet.ip(0)}/24` },
    }),
    options.prepare?.(topology, hosts) ?? Promise.resolve({}),
  ]);
  done('postgres and prepare');

  const keyDir = lab.makeTempDir('secret');
  const secretKeyFile = join(keyDir, 'secret.key');
  writeFileSync(secretKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const copyKey = options.copySecretKeyIntoDataDirs ?? COPY_SECRET_KEY_INTO_DATA_DIRS;

  const start = async (name: GatewayName, host: GatewayHost): Promise<ClusterGateway> => {
    const dataDir = lab.makeTempDir(`data-${name}`);
    if (copyKey) copyFileSync(secretKeyFile, join(dataDir, 'secret.key'));
    const gateway = await startGateway(lab, {
      ns: host.ns,
      apiIp: host.mgmtIp,
      publicHost: host.publicIp,
      wgInterface: lab.ifName(HOSTS[name].role),
      dataDir,
      env: {
        ...extraEnv,
        POSTERN_DATABASE_URL: postgres.url,
        POSTERN_SECRET_KEY_FILE: secretKeyFile,
        POSTERN_GATEWAY_NAME: name,
        POSTERN_WG_ENDPOINT: `${host.publicIp}:${WG_PORT}`,
        ...(process.env.POSTERN_E2E_GATEWAY_LOG ? { POSTERN_LOG_LEVEL: process.env.POSTERN_E2E_GATEWAY_LOG } : {}),
      },
    });
    return {
      name,
      host,
      gateway,
      api: await gateway.login(),
      async killHost() {
        await killNamespaceProcesses(host.ns);
        await gateway.process.exited;
      },
    };
  };

  // All three at once on the empty database, as Helm's parallel pod management and compose start them: the first
  // boot's bootstrap must create the admin and the local node exactly once (checked inside its write).
  const gateways = await Promise.all(GATEWAY_NAMES.map((name, index) => start(name, hosts[index] as GatewayHost)));
  done('gateways');
  return {
    lab,
    topology,
    postgres,
    gateways,
    setupMs,
    gateway(name) {
      const found = gateways.find((candidate) => candidate.name === name);
      if (found === undefined) throw new Error(`no gateway ${name}`);
      return found;
    },
  };
}
