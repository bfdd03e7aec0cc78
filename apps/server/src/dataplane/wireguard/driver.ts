import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { runCommand } from '../exec.js';
import { isAlive, readCmdline, waitFor } from '../nginx/process-info.js';
import type { DataPlaneLogger, DesiredPeer, DesiredState, WgPeerStatus, WireGuardAdapter } from '../types.js';
import { assertInterfaceName, assertIPv4Cidr, assertPort, assertWgKey, isWgKey } from '../validate.js';
import { formatSubnet, isInSubnet, parseSubnet } from './addresses.js';
import { parseWgDump } from './dump.js';
import { jumpRules, needsForwarding, renderFirewallRules, routesForPeers, type TunnelPorts } from './firewall.js';
import { isIPv4Endpoint, renderServerConfig } from './render.js';

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

/**
 * The gateway's WireGuard interface. Kernel WireGuard when `ip link add … type wireguard` works, `wireguard-go`
 * otherwise. wireguard-go runs detached (own session, output to a log file, no pipe to the control plane), so it
 * outlives a restart of the control plane, which adopts the interface as it finds it. Key material reaches `wg`
 * only through 0600 files, never argv (argv is world-readable in /proc).
 */
export function createWireGuardDriver(options: WireGuardDriverOptions): WireGuardAdapter {
  const ifname = assertInterfaceName(options.wgInterface, 'interface');
  const { logger, stateDir } = options;
  const inNetns = (file: string, args: readonly string[]): [string, string[]] =>
    options.netns === undefined ? [file, [...args]] : ['ip', ['netns', 'exec', options.netns, file, ...args]];
  const run = (file: string, args: readonly string[], opts?: { input?: string }): ReturnType<typeof runCommand> =>
    runCommand(...inNetns(file, args), opts);
  // Inside our own namespace /sys/class/net tells without a process; a test's other namespace needs `ip`.
  const isLinkPresent = (): Promise<boolean> =>
    options.netns === undefined
      ? Promise.resolve(existsSync(`/sys/class/net/${ifname}`))
      : run('ip', ['link', 'show', 'dev', ifname]).then(
          () => true,
          () => false,
        );
  const pidFile = join(stateDir, `${ifname}.wireguard-go.pid`);
  const goLog = join(stateDir, `${ifname}.wireguard-go.log`);
  let gateway: DesiredState['gateway'] | null = null;
  let isForwardingOn = false;
  // What the interface was last brought to, so a steady-state apply costs one check (the reconciler runs on every
  // API change). Reset whenever the link had to be created again.
  let appliedGateway: string | null = null;
  let appliedPeers: string | null = null;
  let lastPeers: DesiredPeer[] = [];
  /** What the last successful sync made (routes, firewall), so an apply that changes neither skips them. */
  let appliedRoutes: string | null = null;
  let appliedRules: string | null = null;
  let lastRouteErrors = new Map<number, string>();
  /**
   * Last endpoint seen per peer public key, kept across a peer's removal (disable, then connect again) and, in a
   * 0600 file of the state dir, across a restart of the gateway: a rebuilt interface dials its nodes at once
   * instead of waiting up to ~2.5 min for each node's stale session to expire.
   */
  const lastEndpoints = new Map<string, string>();
  const endpointsFile = join(stateDir, `${ifname}.endpoints.json`);
  let savedEndpoints = '';
  let isEndpointsLoaded = false;
  let hasAskedEndpoints = false;

  async function loadEndpoints(): Promise<void> {
    if (isEndpointsLoaded) return;
    isEndpointsLoaded = true;
    const text = await readFile(endpointsFile, 'utf8').catch(() => '{}');
    try {
      for (const [publicKey, endpoint] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
        if (isWgKey(publicKey) && typeof endpoint === 'string' && isIPv4Endpoint(endpoint))
          lastEndpoints.set(publicKey, endpoint);
      }
    } catch {
      logger.warn({ file: endpointsFile }, 'WireGuard: ignoring an unreadable endpoints file');
    }
    savedEndpoints = JSON.stringify(Object.fromEntries(lastEndpoints));
  }

  async function saveEndpoints(): Promise<void> {
    const text = JSON.stringify(Object.fromEntries(lastEndpoints));
    if (text === savedEndpoints) return;
    savedEndpoints = text;
    await writeFileAtomic(endpointsFile, text, 0o600);
  }

  /** The wireguard-go process serving our interface, if one runs (from its pid file). */
  async function userspacePid(): Promise<number | null> {
    const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return null;
    const cmdline = await readCmdline(pid);
    return cmdline?.includes('wireguard-go') && cmdline.includes(ifname) ? pid : null;
  }

  async function createLink(): Promise<void> {
    try {
      await run('ip', ['link', 'add', 'dev', ifname, 'type', 'wireguard']);
      logger.info({ interface: ifname }, 'WireGuard: using kernel WireGuard');
      return;
    } catch {
      // No kernel module (containers, these test machines): fall back to userspace.
    }
    const stale = await userspacePid();
    if (stale !== null) process.kill(stale, 'SIGKILL');
    const bin = options.wireguardGoBin ?? 'wireguard-go';
    const out = openSync(goLog, 'a', 0o600);
    const child = spawn(...inNetns(bin, ['-f', ifname]), { stdio: ['ignore', out, out], detached: true });
    closeSync(out);
    child.unref();
    child.on('error', (err) => logger.error({ err }, 'WireGuard: cannot run wireguard-go'));
    if (child.pid !== undefined) await writeFile(pidFile, `${child.pid}\n`, { mode: 0o600 });
    const isUp = await waitFor(async () => child.exitCode !== null || (await isLinkPresent()), LINK_DEADLINE_MS, 25);
    if (!isUp || child.exitCode !== null) {
      const log = await readFile(goLog, 'utf8').catch(() => '');
      throw new Error(
        `wireguard-go did not create ${ifname}: ${log.trim().split('\n').slice(-3).join(' ') || 'no output'}`,
      );
    }
    logger.info({ interface: ifname, pid: child.pid }, 'WireGuard: no kernel WireGuard, using wireguard-go');
  }

  async function syncAddress(address: string): Promise<void> {
    assertIPv4Cidr(address, 'gateway address');
    const { stdout } = await run('ip', ['-4', '-o', 'address', 'show', 'dev', ifname]);
    const present = [...stdout.matchAll(/\binet (\S+)/g)].map((m) => m[1] ?? '');
    for (const other of present.filter((a) => a !== address)) await run('ip', ['address', 'del', other, 'dev', ifname]);
    if (!present.includes(address)) await run('ip', ['address', 'add', address, 'dev', ifname]);
    await run('ip', ['link', 'set', 'dev', ifname, 'up']);
  }

  /**
   * Gateway nodes' networks, each its own route `dev <if> proto static`. Added, never replaced: a network the host
   * already routes elsewhere (its own LAN) is refused for that node alone, and deleting the node removes only
   * what was added, so the host's routes stay exactly as they were.
   */
  async function syncRoutes(peers: DesiredPeer[], vpnSubnet: string): Promise<Map<number, string>> {
    const vpn = parseSubnet(vpnSubnet);
    const wanted = routesForPeers(peers, (cidr) => isInSubnet(cidr.split('/')[0] ?? '', vpn));
    const key = JSON.stringify(wanted);
    // Most applies change no gateway network: then the routes made last time still stand (heal resets this).
    if (key === appliedRoutes)
      return new Map([...lastRouteErrors].filter(([nodeId]) => wanted.some((r) => r.nodeId === nodeId)));
    const { stdout } = await run('ip', ['-4', '-o', 'route', 'show', 'dev', ifname, 'proto', 'static']);
    const present = stdout
      .split('\n')
      .map((line) => line.split(' ')[0] ?? '')
      .filter((cidr) => cidr !== '');
    const wantedCidrs = new Set(wanted.map((route) => route.cidr));
    for (const cidr of present.filter((c) => !wantedCidrs.has(c)))
      await run('ip', ['route', 'del', cidr, 'dev', ifname, 'proto', 'static']);
    const errors = new Map<number, string>();
    for (const { cidr, nodeId } of wanted.filter((route) => !present.includes(route.cidr))) {
      try {
        await run('ip', ['route', 'add', cidr, 'dev', ifname, 'proto', 'static']);
      } catch (err) {
        const detail =
          err instanceof Error && /exists/i.test(err.message)
            ? 'the gateway host already routes this network'
            : String(err);
        errors.set(nodeId, `cannot route ${cidr} into the tunnel: ${detail}`);
      }
    }
    appliedRoutes = errors.size === 0 ? key : null;
    return errors;
  }

  async function syncFirewall(peers: DesiredPeer[], tunnelAddress: string): Promise<void> {
    const rules = renderFirewallRules(ifname, peers, { ...options.ports, tunnelAddress });
    // Rules change only with full-tunnel nodes; every spawn of iptables costs tens of ms on the apply's path.
    if (rules === appliedRules) return;
    await run('iptables-restore', ['--noflush'], { input: rules });
    for (const rule of jumpRules(ifname)) {
      const exists = await run('iptables', ['-t', rule.table, '-C', rule.chain, ...rule.match]).then(
        () => true,
        () => false,
      );
      if (!exists) await run('iptables', ['-t', rule.table, '-I', rule.chain, '1', ...rule.match]);
    }
    appliedRules = rules;
    if (needsForwarding(peers) && !isForwardingOn) {
      // Full-tunnel nodes need the host to forward; only turned on when such a node exists. Read first: in a
      // container /proc/sys is read-only, and the value is usually already 1 there (set by the runtime).
      const { stdout } = await run('sysctl', ['-n', 'net.ipv4.ip_forward']);
      if (stdout.trim() !== '1') {
        await run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
        logger.info({}, 'WireGuard: enabled IPv4 forwarding for full-tunnel nodes');
      }
      isForwardingOn = true;
    }
  }

  /** Endpoints of current peers, read right before a sync (the status poll keeps them fresh in between). */
  async function rememberEndpoints(): Promise<void> {
    const { stdout } = await run('wg', ['show', ifname, 'endpoints']).catch(() => ({ stdout: '' }));
    for (const line of stdout.split('\n')) {
      const [publicKey, endpoint] = line.split('\t');
      if (publicKey && endpoint && isIPv4Endpoint(endpoint)) lastEndpoints.set(publicKey, endpoint);
    }
  }

  async function ensureInterface(desired: DesiredState['gateway']): Promise<void> {
    assertWgKey(desired.privateKey, 'gateway private key');
    assertPort(desired.listenPort, 'listen port');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    if (!(await isLinkPresent())) {
      appliedGateway = null;
      appliedPeers = null;
      await createLink();
    }
    if (appliedGateway === JSON.stringify(desired)) return;
    // Also on adoption: the same key and port again change nothing, and no peer loses its session.
    const keyFile = join(stateDir, `${ifname}.key`);
    await writeFileAtomic(keyFile, `${desired.privateKey}\n`, 0o600);
    await run('wg', ['set', ifname, 'listen-port', String(desired.listenPort), 'private-key', keyFile]);
    await syncAddress(desired.address);
    gateway = desired;
    appliedGateway = JSON.stringify(desired);
    appliedPeers = null; // a new key or port: re-sync peers too
  }

  async function syncPeers(peers: DesiredPeer[]): Promise<Map<number, string>> {
    if (!gateway) throw new Error('WireGuard: syncPeers before ensureInterface');
    const wanted = JSON.stringify(peers);
    if (appliedPeers === wanted) return lastRouteErrors;
    const errors = new Map<number, string>();
    // One node's bad key must not take every peer down with it (wg syncconf refuses the whole file).
    const usable = peers.filter((peer) => {
      try {
        renderServerConfig({
          privateKey: gateway?.privateKey ?? '',
          listenPort: gateway?.listenPort ?? 1,
          peers: [peer],
        });
        return true;
      } catch (err) {
        errors.set(peer.nodeId, err instanceof Error ? err.message : String(err));
        return false;
      }
    });
    await loadEndpoints();
    // The status poll refreshes the endpoints every 2 s (dump); only the first sync of this process asks wg itself.
    if (!hasAskedEndpoints) {
      hasAskedEndpoints = true;
      await rememberEndpoints();
    }
    // A peer that is re-added (node connected again) gets its last endpoint back, so the gateway starts the
    // handshake instead of waiting up to two minutes for the node's stale session to time out.
    const withEndpoints = usable.map((peer) => ({ ...peer, endpoint: lastEndpoints.get(peer.publicKey) ?? null }));
    const confFile = join(stateDir, `${ifname}.conf`);
    await writeFileAtomic(
      confFile,
      renderServerConfig({ privateKey: gateway.privateKey, listenPort: gateway.listenPort, peers: withEndpoints }),
      0o600,
    );
    // syncconf changes only what differs: unchanged peers keep their session, removed peers stop at once.
    await run('wg', ['syncconf', ifname, confFile]);
    const routeErrors = await syncRoutes(usable, formatSubnet(parseSubnet(gateway.address)));
    for (const [nodeId, message] of routeErrors) errors.set(nodeId, message);
    await syncFirewall(usable, gateway.address.split('/')[0] ?? '');
    appliedPeers = wanted;
    lastPeers = peers;
    lastRouteErrors = errors;
    return errors;
  }

  return {
    ensureInterface,
    syncPeers,

    async heal() {
      if (!gateway || (await isLinkPresent())) return false;
      logger.error({ interface: ifname }, 'WireGuard: the interface is gone; creating it again');
      appliedGateway = null;
      appliedPeers = null;
      appliedRoutes = null;
      appliedRules = null;
      const desired = gateway;
      await ensureInterface(desired);
      await syncPeers(lastPeers);
      return true;
    },

    async drift(peers) {
      if (!gateway) return [];
      if (!(await isLinkPresent())) return [`the WireGuard interface ${ifname} is missing`];
      const differences: string[] = [];
      const held = new Map(
        parseWgDump((await run('wg', ['show', ifname, 'dump'])).stdout).map((p) => [
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
        if (!wantedKeys.has(key))
          differences.push(`WireGuard has a peer the database does not know (${key.slice(0, 8)}…)`);
      const vpn = parseSubnet(formatSubnet(parseSubnet(gateway.address)));
      const wantedRoutes = routesForPeers(peers, (cidr) => isInSubnet(cidr.split('/')[0] ?? '', vpn))
        .filter((r) => !lastRouteErrors.has(r.nodeId))
        .map((r) => r.cidr);
      const { stdout } = await run('ip', ['-4', '-o', 'route', 'show', 'dev', ifname, 'proto', 'static']);
      const routes = new Set(
        stdout
          .split('\n')
          .map((line) => line.split(' ')[0] ?? '')
          .filter((cidr) => cidr !== ''),
      );
      for (const cidr of wantedRoutes)
        if (!routes.has(cidr)) differences.push(`the route of ${cidr} into the tunnel is missing`);
      for (const cidr of routes)
        if (!wantedRoutes.includes(cidr)) differences.push(`a route of ${cidr} into the tunnel is left over`);
      for (const rule of jumpRules(ifname)) {
        const exists = await run('iptables', ['-t', rule.table, '-C', rule.chain, ...rule.match]).then(
          () => true,
          () => false,
        );
        if (!exists) differences.push(`the firewall jump ${rule.chain} → ${rule.match.at(-1) ?? ''} is missing`);
      }
      return differences;
    },

    forget() {
      appliedGateway = null;
      appliedPeers = null;
      appliedRoutes = null;
      appliedRules = null;
    },

    async dump(): Promise<WgPeerStatus[]> {
      const { stdout } = await run('wg', ['show', ifname, 'dump']);
      const peers = parseWgDump(stdout);
      // The file first, so what the last process knew is kept (a poll can come before the first sync).
      await loadEndpoints();
      for (const peer of peers)
        if (peer.endpoint && isIPv4Endpoint(peer.endpoint)) lastEndpoints.set(peer.publicKey, peer.endpoint);
      // Written only when an endpoint changed (nodes roam rarely), not on every 2 s poll.
      await saveEndpoints().catch((err: unknown) => logger.warn({ err }, 'WireGuard: could not save peer endpoints'));
      return peers;
    },

    async close({ keepServing }) {
      // The status poll saves endpoints every 2 s: a node that handshook (or roamed) since the last poll would be
      // forgotten by a stop now, and after the restart wait minutes for its stale session to expire. So the
      // endpoints are read and saved once more, while the interface still exists.
      await loadEndpoints();
      await rememberEndpoints();
      await saveEndpoints().catch((err: unknown) => logger.warn({ err }, 'WireGuard: could not save peer endpoints'));
      appliedGateway = null;
      appliedPeers = null;
      appliedRoutes = null;
      appliedRules = null;
      gateway = null;
      if (keepServing) return;
      const pid = await userspacePid();
      if (pid !== null) {
        process.kill(pid, 'SIGTERM');
        if (!(await waitFor(() => !isAlive(pid), 3000))) process.kill(pid, 'SIGKILL');
        await rm(pidFile, { force: true });
      }
      await run('ip', ['link', 'del', 'dev', ifname]).catch(() => undefined);
    },
  };
}
