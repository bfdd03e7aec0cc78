import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isInSubnet } from '@postern/contract';
import { writeFileAtomic } from '../atomic-write.js';
import { runCommand } from '../exec.js';
import { waitUntil } from '../../lib/wait.js';
import { isAlive, readCmdline } from '../nginx/process-info.js';
import type { DataPlaneLogger, DesiredPeer, DesiredState, WgPeerStatus, WireGuardAdapter } from '../types.js';
import { assertInterfaceName, assertIPv4Cidr, assertPort, assertWgKey, isWgKey } from '../validate.js';
import { formatSubnet, parseSubnet } from './addresses.js';
import { parseWgDump } from './dump.js';
import { jumpRules, needsForwarding, renderFirewallRules, routesForPeers, type TunnelPorts } from './firewall.js';
import { GATEWAY_KEEPALIVE_SECONDS, isIPv4Endpoint, renderServerConfig } from './render.js';
import { removeLeftoverSecrets, withSecretFile } from './secret-file.js';

export interface WireGuardDriverOptions {
  wgInterface: string;
  /** Private dir (0700) for the generated `wg` config files, which hold the gateway's private key. */
  stateDir: string;
  logger: DataPlaneLogger;
  /** What nodes may reach on the gateway through the tunnel (firewall.ts). */
  ports: Omit<TunnelPorts, 'tunnelAddress'>;
  wireguardGoBin?: string;
  /** Run every command inside this network namespace (`ip netns exec`): system tests. */
  netns?: string;
}

const LINK_DEADLINE_MS = 5000;

/** The commands of one interface (`wg`, `ip`, `iptables`), run inside a test's namespace when one is given. */
class InterfaceHost {
  constructor(
    readonly ifname: string,
    private readonly netns: string | undefined,
  ) {}

  argv(file: string, args: readonly string[]): [string, string[]] {
    return this.netns === undefined ? [file, [...args]] : ['ip', ['netns', 'exec', this.netns, file, ...args]];
  }

  run(file: string, args: readonly string[], opts?: { input?: string }): ReturnType<typeof runCommand> {
    return runCommand(...this.argv(file, args), opts);
  }

  /** Inside our own namespace /sys/class/net tells without a process; a test's other namespace needs `ip`. */
  isLinkPresent(): Promise<boolean> {
    if (this.netns === undefined) return Promise.resolve(existsSync(`/sys/class/net/${this.ifname}`));
    return this.run('ip', ['link', 'show', 'dev', this.ifname]).then(
      () => true,
      () => false,
    );
  }

  /** The networks routed into the tunnel by us (`proto static`). */
  async staticRoutes(): Promise<string[]> {
    const { stdout } = await this.run('ip', ['-4', '-o', 'route', 'show', 'dev', this.ifname, 'proto', 'static']);
    return stdout
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter((cidr) => cidr !== '');
  }

  hasRule(rule: { table: string; chain: string; match: readonly string[] }): Promise<boolean> {
    return this.run('iptables', ['-t', rule.table, '-C', rule.chain, ...rule.match]).then(
      () => true,
      () => false,
    );
  }
}

/**
 * Last endpoint seen per peer public key, kept across a peer's removal (disable, then connect again) and, in a 0600
 * file of the state dir, across a restart of the gateway: a rebuilt interface dials its nodes at once instead of
 * waiting up to ~2.5 min for each node's stale session to expire.
 */
class EndpointMemory {
  private readonly endpoints = new Map<string, string>();
  private saved = '';
  private isLoaded = false;
  /** The status poll refreshes the endpoints every 2 s (dump); only the first sync of this process asks wg itself. */
  hasAskedWg = false;

  constructor(
    private readonly file: string,
    private readonly logger: DataPlaneLogger,
  ) {}

  get(publicKey: string): string | null {
    return this.endpoints.get(publicKey) ?? null;
  }

  record(publicKey: string, endpoint: string | null | undefined): void {
    if (endpoint && isIPv4Endpoint(endpoint)) this.endpoints.set(publicKey, endpoint);
  }

  async load(): Promise<void> {
    if (this.isLoaded) return;
    this.isLoaded = true;
    const text = await readFile(this.file, 'utf8').catch(() => '{}');
    try {
      for (const [publicKey, endpoint] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
        if (isWgKey(publicKey) && typeof endpoint === 'string') this.record(publicKey, endpoint);
      }
    } catch {
      this.logger.warn({ file: this.file }, 'WireGuard: ignoring an unreadable endpoints file');
    }
    this.saved = JSON.stringify(Object.fromEntries(this.endpoints));
  }

  /** Written only when an endpoint changed (nodes roam rarely), not on every 2 s poll. */
  async save(): Promise<void> {
    const text = JSON.stringify(Object.fromEntries(this.endpoints));
    if (text === this.saved) return;
    this.saved = text;
    await writeFileAtomic(this.file, text, 0o600).catch((err: unknown) =>
      this.logger.warn({ err }, 'WireGuard: could not save peer endpoints'),
    );
  }

  /** Endpoints of current peers, read right before a sync (the status poll keeps them fresh in between). */
  async askWg(host: InterfaceHost): Promise<void> {
    const { stdout } = await host.run('wg', ['show', host.ifname, 'endpoints']).catch(() => ({ stdout: '' }));
    for (const line of stdout.split('\n')) {
      const [publicKey, endpoint] = line.split('\t');
      if (publicKey) this.record(publicKey, endpoint);
    }
  }
}

/**
 * What the interface was last brought to, so a steady-state apply costs one check (the reconciler runs on every API
 * change). Forgotten whenever the link had to be created again, on heal and drift repair, and at close.
 */
class AppliedState {
  /** The gateway's key, port and address the interface has; null until ensureInterface (and after close). */
  gateway: DesiredState['gateway'] | null = null;
  gatewayKey: string | null = null;
  peersKey: string | null = null;
  /** What the last successful sync made (routes, firewall), so an apply that changes neither skips them. */
  routesKey: string | null = null;
  rulesKey: string | null = null;
  /** The peers of the last sync (heal syncs them again) and the errors it reported per node. */
  peers: DesiredPeer[] = [];
  /** Nodes among `peers` whose config does not render (never a peer). */
  unusable = new Set<number>();
  routeErrors = new Map<number, string>();
  /** Turned on once a full-tunnel node exists; never turned off by us. */
  isForwardingOn = false;

  forget(): void {
    this.gatewayKey = null;
    this.peersKey = null;
    this.routesKey = null;
    this.rulesKey = null;
  }
}

/** Starts wireguard-go detached when the kernel has no WireGuard; throws with its last log lines if it fails. */
async function createLink(host: InterfaceHost, files: TunnelFiles, options: WireGuardDriverOptions): Promise<void> {
  const { ifname } = host;
  const { logger } = options;
  try {
    await host.run('ip', ['link', 'add', 'dev', ifname, 'type', 'wireguard']);
    logger.info({ interface: ifname }, 'WireGuard: using kernel WireGuard');
    return;
  } catch {
    // No kernel module (containers, these test machines): fall back to userspace.
  }
  const stale = await userspacePid(host, files.pid);
  if (stale !== null) process.kill(stale, 'SIGKILL');
  const bin = options.wireguardGoBin ?? 'wireguard-go';
  const out = openSync(files.goLog, 'a', 0o600);
  const child = spawn(...host.argv(bin, ['-f', ifname]), { stdio: ['ignore', out, out], detached: true });
  closeSync(out);
  child.unref();
  child.on('error', (err) => logger.error({ err }, 'WireGuard: cannot run wireguard-go'));
  if (child.pid !== undefined) await writeFile(files.pid, `${child.pid}\n`, { mode: 0o600 });
  const isUp = await waitUntil(
    async () => child.exitCode !== null || (await host.isLinkPresent()),
    LINK_DEADLINE_MS,
    25,
  );
  if (!isUp || child.exitCode !== null) {
    const log = await readFile(files.goLog, 'utf8').catch(() => '');
    throw new Error(
      `wireguard-go did not create ${ifname}: ${log.trim().split('\n').slice(-3).join(' ') || 'no output'}`,
    );
  }
  logger.info({ interface: ifname, pid: child.pid }, 'WireGuard: no kernel WireGuard, using wireguard-go');
}

interface TunnelFiles {
  pid: string;
  goLog: string;
  key: string;
  conf: string;
  /** Where a peer's preshared key waits for `wg set … preshared-key <file>` (a scoped run's peer): made 0700. */
  secretsDir: string;
}

/** The wireguard-go process serving our interface, if one runs (from its pid file). */
async function userspacePid(host: InterfaceHost, pidFile: string): Promise<number | null> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return null;
  const cmdline = await readCmdline(pid);
  return cmdline?.includes('wireguard-go') && cmdline.includes(host.ifname) ? pid : null;
}

async function syncAddress(host: InterfaceHost, address: string): Promise<void> {
  const { ifname } = host;
  assertIPv4Cidr(address, 'gateway address');
  const { stdout } = await host.run('ip', ['-4', '-o', 'address', 'show', 'dev', ifname]);
  const present = [...stdout.matchAll(/\binet (\S+)/g)].map((m) => m[1] ?? '');
  for (const other of present.filter((a) => a !== address))
    await host.run('ip', ['address', 'del', other, 'dev', ifname]);
  if (!present.includes(address)) await host.run('ip', ['address', 'add', address, 'dev', ifname]);
  await host.run('ip', ['link', 'set', 'dev', ifname, 'up']);
}

/** Gateway nodes' networks that are not inside the tunnel's own subnet, each with its node. */
function gatewayRoutes(peers: DesiredPeer[], gatewayAddress: string) {
  const vpn = formatSubnet(parseSubnet(gatewayAddress));
  return routesForPeers(peers, (cidr) => isInSubnet(cidr.split('/')[0] ?? '', vpn));
}

/**
 * Gateway nodes' networks, each its own route `dev <if> proto static`. Added, never replaced: a network the host
 * already routes elsewhere (its own LAN) is refused for that node alone, and deleting the node removes only what was
 * added, so the host's routes stay exactly as they were.
 */
async function syncRoutes(
  host: InterfaceHost,
  applied: AppliedState,
  peers: DesiredPeer[],
  gatewayAddress: string,
): Promise<Map<number, string>> {
  const { ifname } = host;
  const wanted = gatewayRoutes(peers, gatewayAddress);
  const key = JSON.stringify(wanted);
  // Most applies change no gateway network: then the routes made last time still stand (heal resets this).
  if (key === applied.routesKey)
    return new Map([...applied.routeErrors].filter(([nodeId]) => wanted.some((r) => r.nodeId === nodeId)));
  const present = await host.staticRoutes();
  const wantedCidrs = new Set(wanted.map((route) => route.cidr));
  for (const cidr of present.filter((c) => !wantedCidrs.has(c)))
    await host.run('ip', ['route', 'del', cidr, 'dev', ifname, 'proto', 'static']);
  const errors = new Map<number, string>();
  for (const { cidr, nodeId } of wanted.filter((route) => !present.includes(route.cidr))) {
    try {
      await host.run('ip', ['route', 'add', cidr, 'dev', ifname, 'proto', 'static']);
    } catch (err) {
      const detail =
        err instanceof Error && /exists/i.test(err.message)
          ? 'the gateway host already routes this network'
          : String(err);
      errors.set(nodeId, `cannot route ${cidr} into the tunnel: ${detail}`);
    }
  }
  applied.routesKey = errors.size === 0 ? key : null;
  return errors;
}

async function syncFirewall(
  host: InterfaceHost,
  applied: AppliedState,
  rules: { peers: DesiredPeer[]; ports: TunnelPorts; logger: DataPlaneLogger },
): Promise<void> {
  const { ifname } = host;
  const { peers, logger } = rules;
  const text = renderFirewallRules(ifname, peers, rules.ports);
  // Rules change only with full-tunnel nodes; every spawn of iptables costs tens of ms on the apply's path.
  if (text === applied.rulesKey) return;
  await host.run('iptables-restore', ['--noflush'], { input: text });
  for (const rule of jumpRules(ifname))
    if (!(await host.hasRule(rule)))
      await host.run('iptables', ['-t', rule.table, '-I', rule.chain, '1', ...rule.match]);
  applied.rulesKey = text;
  if (needsForwarding(peers) && !applied.isForwardingOn) {
    // Full-tunnel nodes need the host to forward; only turned on when such a node exists. Read first: in a
    // container /proc/sys is read-only, and the value is usually already 1 there (set by the runtime).
    const { stdout } = await host.run('sysctl', ['-n', 'net.ipv4.ip_forward']);
    if (stdout.trim() !== '1') {
      await host.run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
      logger.info({}, 'WireGuard: enabled IPv4 forwarding for full-tunnel nodes');
    }
    applied.isForwardingOn = true;
  }
}

/** Peers whose config renders; one node's bad key must not take every peer down (wg syncconf refuses the file). */
function usablePeers(gateway: DesiredState['gateway'], peers: DesiredPeer[], errors: Map<number, string>) {
  return peers.filter((peer) => {
    try {
      renderServerConfig({ privateKey: gateway.privateKey, listenPort: gateway.listenPort, peers: [peer] });
      return true;
    } catch (err) {
      errors.set(peer.nodeId, err instanceof Error ? err.message : String(err));
      return false;
    }
  });
}

/** What WireGuard holds that differs from `peers`: peers, their addresses, routes into the tunnel, firewall jumps. */
async function tunnelDrift(host: InterfaceHost, applied: AppliedState, peers: DesiredPeer[]): Promise<string[]> {
  const { ifname } = host;
  const gateway = applied.gateway;
  if (!gateway) return [];
  if (!(await host.isLinkPresent())) return [`the WireGuard interface ${ifname} is missing`];
  const differences: string[] = [];
  const held = new Map(
    parseWgDump((await host.run('wg', ['show', ifname, 'dump'])).stdout).map((p) => [
      p.publicKey,
      [...p.allowedIps].sort().join(','),
    ]),
  );
  for (const peer of peers) {
    if (!isWgKey(peer.publicKey)) continue; // set aside at sync: never a peer
    const allowed = held.get(peer.publicKey);
    if (allowed === undefined) differences.push(`WireGuard lacks the peer of node ${peer.nodeId}`);
    else if (allowed !== [...peer.allowedIps].sort().join(','))
      differences.push(`WireGuard routes other addresses to node ${peer.nodeId} than the database says`);
  }
  const wantedKeys = new Set(peers.map((p) => p.publicKey));
  for (const key of held.keys())
    if (!wantedKeys.has(key)) differences.push(`WireGuard has a peer the database does not know (${key.slice(0, 8)}…)`);
  const wantedRoutes = gatewayRoutes(peers, gateway.address)
    .filter((r) => !applied.routeErrors.has(r.nodeId))
    .map((r) => r.cidr);
  const routes = new Set(await host.staticRoutes());
  for (const cidr of wantedRoutes)
    if (!routes.has(cidr)) differences.push(`the route of ${cidr} into the tunnel is missing`);
  for (const cidr of routes)
    if (!wantedRoutes.includes(cidr)) differences.push(`a route of ${cidr} into the tunnel is left over`);
  for (const rule of jumpRules(ifname))
    if (!(await host.hasRule(rule)))
      differences.push(`the firewall jump ${rule.chain} → ${rule.match.at(-1) ?? ''} is missing`);
  return differences;
}

/** What a scoped run's peer patch works with. */
interface Tunnel {
  host: InterfaceHost;
  applied: AppliedState;
  files: TunnelFiles;
  endpoints: EndpointMemory;
  options: WireGuardDriverOptions;
}

/**
 * One peer set as `peer` says with `wg set` (values validated by usablePeers' render; the preshared key through a
 * 0600 file of its own, never argv: withSecretFile). Its allowed IPs are replaced whole; its session, and every
 * other peer, stay.
 */
async function setPeer({ host, files, endpoints }: Tunnel, peer: DesiredPeer): Promise<void> {
  const { ifname } = host;
  const endpoint = endpoints.get(peer.publicKey);
  const dial =
    endpoint !== null && isIPv4Endpoint(endpoint)
      ? ['endpoint', endpoint, 'persistent-keepalive', String(GATEWAY_KEEPALIVE_SECONDS)]
      : [];
  const allowed = peer.allowedIps.join(',');
  const set = (psk: string) =>
    host.run('wg', ['set', ifname, 'peer', peer.publicKey, 'preshared-key', psk, ...dial, 'allowed-ips', allowed]);
  if (peer.presharedKey === null) await set('/dev/null');
  else await withSecretFile(files.secretsDir, peer.presharedKey, set);
}

/**
 * A scoped run's peers (dataplane/README.md "Scoped applies"): the peers of `nodeIds` only, each removed (a node
 * disabled or deleted, an old key) or set alone; routes and firewall rules are diffed against the last sync, so only
 * these nodes' entries change. `wg syncconf` stays the full run's.
 */
async function patchTunnelPeers(
  tunnel: Tunnel,
  peers: readonly DesiredPeer[],
  nodeIds: readonly number[],
): Promise<Map<number, string> | null> {
  const { host, applied, endpoints, options } = tunnel;
  const { ifname } = host;
  const gateway = applied.gateway;
  // Nothing synced since the interface was made (or forgotten after drift or heal): a full sync.
  if (!gateway || applied.peersKey === null || !(await host.isLinkPresent())) return null;
  const ids = new Set(nodeIds);
  const mine = peers.filter((peer) => ids.has(peer.nodeId));
  const errors = new Map<number, string>();
  const usable = usablePeers(gateway, mine, errors);
  // Unknown until the patch is through: one that fails midway leaves the next apply a full sync (`wg syncconf`).
  applied.peersKey = null;
  await endpoints.load();
  const kept = new Set(usable.map((peer) => peer.publicKey));
  for (const old of applied.peers)
    if (ids.has(old.nodeId) && isWgKey(old.publicKey) && !kept.has(old.publicKey))
      await host.run('wg', ['set', ifname, 'peer', old.publicKey, 'remove']);
  for (const peer of usable) await setPeer(tunnel, peer);
  const next = [...applied.peers.filter((peer) => !ids.has(peer.nodeId)), ...mine].sort((a, b) => a.nodeId - b.nodeId);
  // The other peers as the last sync left them (their render errors kept: they were never peers).
  const others = applied.peers.filter((peer) => !ids.has(peer.nodeId) && !applied.unusable.has(peer.nodeId));
  const routed = [...others, ...usable];
  const routeErrors = await syncRoutes(host, applied, routed, gateway.address);
  for (const [nodeId, message] of routeErrors) if (ids.has(nodeId)) errors.set(nodeId, message);
  const tunnelAddress = gateway.address.split('/')[0] ?? '';
  await syncFirewall(host, applied, {
    peers: routed,
    ports: { ...options.ports, tunnelAddress },
    logger: options.logger,
  });
  const remembered = new Map([...applied.routeErrors].filter(([nodeId]) => !ids.has(nodeId)));
  for (const [nodeId, message] of routeErrors) remembered.set(nodeId, message);
  for (const [nodeId, message] of errors) remembered.set(nodeId, message);
  for (const id of ids) applied.unusable.delete(id);
  for (const peer of mine) if (!usable.includes(peer)) applied.unusable.add(peer.nodeId);
  applied.peers = next;
  // A full sync of the same rows afterwards finds nothing to do.
  applied.peersKey = JSON.stringify(next);
  applied.routeErrors = remembered;
  return errors;
}

/**
 * The gateway's WireGuard interface. Kernel WireGuard when `ip link add … type wireguard` works, `wireguard-go`
 * otherwise. wireguard-go runs detached (own session, output to a log file, no pipe to the control plane), so it
 * outlives a restart of the control plane, which adopts the interface as it finds it. Key material reaches `wg`
 * only through 0600 files, never argv (argv is world-readable in /proc).
 */
export function createWireGuardDriver(options: WireGuardDriverOptions): WireGuardAdapter {
  const ifname = assertInterfaceName(options.wgInterface, 'interface');
  const { logger, stateDir } = options;
  const host = new InterfaceHost(ifname, options.netns);
  const files: TunnelFiles = {
    pid: join(stateDir, `${ifname}.wireguard-go.pid`),
    goLog: join(stateDir, `${ifname}.wireguard-go.log`),
    key: join(stateDir, `${ifname}.key`),
    conf: join(stateDir, `${ifname}.conf`),
    secretsDir: stateDir,
  };
  const applied = new AppliedState();
  let swept = false;
  const endpoints = new EndpointMemory(join(stateDir, `${ifname}.endpoints.json`), logger);

  async function ensureInterface(desired: DesiredState['gateway']): Promise<void> {
    assertWgKey(desired.privateKey, 'gateway private key');
    assertPort(desired.listenPort, 'listen port');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    if (!swept) {
      // A key file a crash (or, before, a failed `wg set`) left behind: the first full run removes it.
      await removeLeftoverSecrets(stateDir, [`${ifname}.psk`]);
      swept = true;
    }
    if (!(await host.isLinkPresent())) {
      applied.gatewayKey = null;
      applied.peersKey = null;
      await createLink(host, files, options);
    }
    if (applied.gatewayKey === JSON.stringify(desired)) return;
    // Also on adoption: the same key and port again change nothing, and no peer loses its session.
    await writeFileAtomic(files.key, `${desired.privateKey}\n`, 0o600);
    await host.run('wg', ['set', ifname, 'listen-port', String(desired.listenPort), 'private-key', files.key]);
    await syncAddress(host, desired.address);
    applied.gateway = desired;
    applied.gatewayKey = JSON.stringify(desired);
    applied.peersKey = null; // a new key or port: re-sync peers too
  }

  async function syncPeers(peers: DesiredPeer[]): Promise<Map<number, string>> {
    const gateway = applied.gateway;
    if (!gateway) throw new Error('WireGuard: syncPeers before ensureInterface');
    const wanted = JSON.stringify(peers);
    if (applied.peersKey === wanted) return applied.routeErrors;
    const errors = new Map<number, string>();
    const usable = usablePeers(gateway, peers, errors);
    await endpoints.load();
    if (!endpoints.hasAskedWg) {
      endpoints.hasAskedWg = true;
      await endpoints.askWg(host);
    }
    // A peer that is re-added (node connected again) gets its last endpoint back, so the gateway starts the
    // handshake instead of waiting up to two minutes for the node's stale session to time out.
    const withEndpoints = usable.map((peer) => ({ ...peer, endpoint: endpoints.get(peer.publicKey) }));
    const { privateKey, listenPort } = gateway;
    await writeFileAtomic(files.conf, renderServerConfig({ privateKey, listenPort, peers: withEndpoints }), 0o600);
    // syncconf changes only what differs: unchanged peers keep their session, removed peers stop at once.
    await host.run('wg', ['syncconf', ifname, files.conf]);
    const routeErrors = await syncRoutes(host, applied, usable, gateway.address);
    for (const [nodeId, message] of routeErrors) errors.set(nodeId, message);
    const tunnelAddress = gateway.address.split('/')[0] ?? '';
    await syncFirewall(host, applied, { peers: usable, ports: { ...options.ports, tunnelAddress }, logger });
    applied.peersKey = wanted;
    applied.peers = peers;
    applied.unusable = new Set(peers.filter((peer) => !usable.includes(peer)).map((peer) => peer.nodeId));
    applied.routeErrors = errors;
    return errors;
  }

  return {
    ensureInterface,
    syncPeers,
    patchPeers: (peers, nodeIds) => patchTunnelPeers({ host, applied, files, endpoints, options }, peers, nodeIds),

    async heal() {
      const gateway = applied.gateway;
      if (!gateway || (await host.isLinkPresent())) return false;
      logger.error({ interface: ifname }, 'WireGuard: the interface is gone; creating it again');
      applied.forget();
      await ensureInterface(gateway);
      await syncPeers(applied.peers);
      return true;
    },

    drift: (peers) => tunnelDrift(host, applied, peers),

    forget: () => applied.forget(),

    async dump(): Promise<WgPeerStatus[]> {
      const { stdout } = await host.run('wg', ['show', ifname, 'dump']);
      const peers = parseWgDump(stdout);
      // The file first, so what the last process knew is kept (a poll can come before the first sync).
      await endpoints.load();
      for (const peer of peers) endpoints.record(peer.publicKey, peer.endpoint);
      await endpoints.save();
      return peers;
    },

    async close({ keepServing }) {
      // The status poll saves endpoints every 2 s: a node that handshook (or roamed) since the last poll would be
      // forgotten by a stop now, and after the restart wait minutes for its stale session to expire. So the
      // endpoints are read and saved once more, while the interface still exists.
      await endpoints.load();
      await endpoints.askWg(host);
      await endpoints.save();
      applied.forget();
      applied.gateway = null;
      if (keepServing) return;
      const pid = await userspacePid(host, files.pid);
      if (pid !== null) {
        process.kill(pid, 'SIGTERM');
        if (!(await waitUntil(() => !isAlive(pid), 3000))) process.kill(pid, 'SIGKILL');
        await rm(files.pid, { force: true });
      }
      await host.run('ip', ['link', 'del', 'dev', ifname]).catch(() => undefined);
    },
  };
}
