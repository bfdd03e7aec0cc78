import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Lab } from './lab.js';
import { run, runIn } from './exec.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// A userspace WireGuard interface inside a namespace, brought up from wg-quick text the way wg-quick would:
// wireguard-go creates the device, `wg setconf` takes the [Interface]/[Peer] keys it understands, and the
// wg-quick-only keys (Address, DNS, MTU, ...) become `ip addr` / `ip route` calls.

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/** X25519 key pair in WireGuard's base64 form. */
export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const toBase64 = (base64url: string | undefined): string =>
    Buffer.from(base64url ?? '', 'base64url').toString('base64');
  return {
    privateKey: toBase64(privateKey.export({ format: 'jwk' }).d),
    publicKey: toBase64(publicKey.export({ format: 'jwk' }).x),
  };
}

export interface WgQuickConfig {
  /** Interface addresses with prefix, e.g. "10.44.0.2/32". */
  addresses: string[];
  /** Every peer's AllowedIPs: what wg-quick would route into the tunnel. */
  routes: string[];
  /** The text `wg setconf` accepts. */
  setconf: string;
}

const WG_QUICK_ONLY_KEYS = new Set([
  'address',
  'dns',
  'mtu',
  'table',
  'preup',
  'postup',
  'predown',
  'postdown',
  'saveconfig',
]);

export function parseWgQuick(text: string): WgQuickConfig {
  const addresses: string[] = [];
  const routes: string[] = [];
  const kept: string[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    const match = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    const key = match?.[1]?.toLowerCase();
    const values = (match?.[2] ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean);
    if (key === 'address') addresses.push(...values);
    if (key === 'allowedips') routes.push(...values);
    if (key === undefined || !WG_QUICK_ONLY_KEYS.has(key)) kept.push(line);
  }
  return { addresses, routes, setconf: `${kept.join('\n')}\n` };
}

export interface WireguardInterface {
  ns: string;
  ifname: string;
  process: ManagedProcess;
  /** `wg show IF dump` output. */
  dump(): Promise<string>;
  /** Removes the interface (wireguard-go deletes the device when it ends). */
  stop(): Promise<void>;
}

const socketPath = (ifname: string): string => `/var/run/wireguard/${ifname}.sock`;

/**
 * Brings up `ifname` in `ns` from wg-quick text. `ifname` must be unique on the machine: wireguard-go's
 * control socket path is shared by all namespaces.
 */
export async function startWireguard(
  lab: Lab,
  ns: string,
  ifname: string,
  configText: string,
  options: { ownSession?: boolean } = {},
): Promise<WireguardInterface> {
  const config = parseWgQuick(configText);
  if (config.routes.some((route) => route.endsWith('/0'))) {
    // A default route into the tunnel would also capture the traffic to the endpoint itself.
    throw new Error('full-tunnel configs (AllowedIPs 0.0.0.0/0) are not supported by the harness');
  }
  // ownSession: in a session of its own, as wg-quick's daemonised wireguard-go and the gateway's detached one run.
  // With the kernel's autogroup scheduling each session shares the CPU as one group, which moves throughput figures
  // on a 2-core machine by a quarter (bench/README.md), so a baseline must run the way the thing it is compared to
  // runs.
  const [file, args] = options.ownSession
    ? ['setsid', ['wireguard-go', '-f', ifname]]
    : ['wireguard-go', ['-f', ifname]];
  const process = lab.spawn(ns, `wireguard-go ${ifname}`, file, args, {
    env: { ...globalThis.process.env, LOG_LEVEL: 'error' },
  });
  await waitFor(
    () => existsSync(socketPath(ifname)) || (!process.isRunning && Promise.reject(new Error(process.text))),
    {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `wireguard-go to create ${ifname}`,
    },
  );
  const dir = await mkdtemp(join(tmpdir(), `${ifname}-`));
  try {
    const file = join(dir, 'wg.conf');
    await writeFile(file, config.setconf, { mode: 0o600 });
    await runIn(ns, 'wg', ['setconf', ifname, file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const address of config.addresses) await run('ip', ['-n', ns, 'addr', 'add', address, 'dev', ifname]);
  await run('ip', ['-n', ns, 'link', 'set', ifname, 'up']);
  for (const route of new Set(config.routes)) await run('ip', ['-n', ns, 'route', 'replace', route, 'dev', ifname]);
  return {
    ns,
    ifname,
    process,
    dump: () => runIn(ns, 'wg', ['show', ifname, 'dump']),
    stop: () => process.stop(),
  };
}

/** Waits until every peer of `wg` has completed a handshake (`wg show dump`: latest handshake > 0). */
export async function waitForHandshake(wg: WireguardInterface, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const peers = (await wg.dump()).trim().split('\n').slice(1);
      return peers.length > 0 && peers.every((line) => Number(line.split('\t')[4]) > 0);
    },
    { timeoutMs, intervalMs: 100, what: `a WireGuard handshake on ${wg.ifname}` },
  );
}

/**
 * How long a re-added peer (node connected again, or the interface rebuilt after a crash) takes to pass traffic:
 * the gateway remembers each node's endpoint (also across restarts) and the gateway dials it at once (Endpoint +
 * PersistentKeepalive in its peer config), so one
 * handshake (a retry every 5 s at worst) plus the reconcile.
 */
export const GATEWAY_REDIAL_BOUND_MS = 10_000;
