import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { runCommand } from '../exec.js';
import type { DataPlaneLogger, DesiredPeer, DesiredState, WgPeerStatus, WireGuardAdapter } from '../types.js';
import { assertInterfaceName, assertIPv4Cidr, assertPort, assertWgKey, isWgKey } from '../validate.js';
import { formatSubnet, isInSubnet, parseSubnet } from './addresses.js';
import { parseWgDump } from './dump.js';
import { jumpRules, needsForwarding, renderFirewallRules, routesForPeers } from './firewall.js';
import { isIPv4Endpoint, renderServerConfig } from './render.js';

export interface WireGuardDriverOptions {
  wgInterface: string;
  /** Private dir (0700) for the generated `wg` config files, which hold the gateway's private key. */
  stateDir: string;
  logger: DataPlaneLogger;
  wireguardGoBin?: string;
  /** Run every command inside this network namespace (`ip netns exec`): system tests. */
  netns?: string;
}

const LINK_DEADLINE_MS = 5000;

async function waitForLink(ifname: string, child: ChildProcess, isLinkPresent: (name: string) => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + LINK_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (await isLinkPresent(ifname)) return;
    if (child.exitCode !== null) throw new Error(`wireguard-go exited with code ${child.exitCode} before creating ${ifname}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`wireguard-go did not create ${ifname} within ${LINK_DEADLINE_MS} ms`);
}

/**
 * The gateway's WireGuard interface. Kernel WireGuard when `ip link add … type wireguard` works, `wireguard-go`
 * otherwise. Key material reaches `wg` only through 0600 files, never argv (argv is world-readable in /proc).
 */
export function createWireGuardDriver(options: WireGuardDriverOptions): WireGuardAdapter {
  const ifname = assertInterfaceName(options.wgInterface, 'interface');
  const { logger, stateDir } = options;
  const inNetns = (file: string, args: readonly string[]): [string, string[]] =>
    (options.netns === undefined ? [file, [...args]] : ['ip', ['netns', 'exec', options.netns, file, ...args]]);
  const run = (file: string, args: readonly string[], opts?: { input?: string }): ReturnType<typeof runCommand> =>
    runCommand(...inNetns(file, args), opts);
  const isLinkPresent = (name: string): Promise<boolean> => run('ip', ['link', 'show', 'dev', name]).then(() => true, () => false);
  let gateway: DesiredState['gateway'] | null = null;
  let userspace: ChildProcess | null = null;
  let isForwardingOn = false;
  // What the interface was last brought to, so a steady-state apply costs one `ip link show` (the reconciler
  // runs on every API change). Reset whenever the link had to be created again.
  let appliedGateway: string | null = null;
  let appliedPeers: string | null = null;
  /**
   * Last endpoint seen per peer public key, kept across a peer's removal (disable, then connect again) and, in a
   * 0600 file of the state dir, across a restart of the gateway: a rebuilt interface dials its nodes at once
   * instead of waiting up to ~2.5 min for each node's stale session to expire.
   */
  const lastEndpoints = new Map<string, string>();
  const endpointsFile = join(stateDir, `${ifname}.endpoints.json`);
  let savedEndpoints = '';
  let isEndpointsLoaded = false;

  async function loadEndpoints(): Promise<void> {
    if (isEndpointsLoaded) return;
    isEndpointsLoaded = true;
    const text = await readFile(endpointsFile, 'utf8').catch(() => '{}');
    try {
      for (const [publicKey, endpoint] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
        if (isWgKey(publicKey) && typeof endpoint === 'string' && isIPv4Endpoint(endpoint)) lastEndpoints.set(publicKey, endpoint);
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

  async function createLink(): Promise<void> {
    try {
      await run('ip', ['link', 'add', 'dev', ifname, 'type', 'wireguard']);
      logger.info({ interface: ifname }, 'WireGuard: using kernel WireGuard');
      return;
    } catch {
      // No kernel module (containers, these test machines): fall back to userspace.
    }
    const bin = options.wireguardGoBin ?? 'wireguard-go';
    const child = spawn(...inNetns(bin, ['-f', ifname]), { stdio: ['ignore', 'pipe', 'pipe'] });
    userspace = child;
    child.stdout?.on('data', (chunk: Buffer) => logger.debug({ wireguardGo: chunk.toString().trim() }, 'wireguard-go'));
    child.stderr?.on('data', (chunk: Buffer) => logger.debug({ wireguardGo: chunk.toString().trim() }, 'wireguard-go'));
    child.on('error', (err) => logger.error({ err }, 'WireGuard: cannot run wireguard-go'));
    child.on('exit', (code, signal) => {
      if (userspace === child) {
        userspace = null;
        // The interface went with it; the next apply recreates it.
        logger.error({ code, signal, interface: ifname }, 'WireGuard: wireguard-go exited');
      }
    });
    await waitForLink(ifname, child, isLinkPresent);
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

  async function syncRoutes(peers: DesiredPeer[], vpnSubnet: string): Promise<void> {
    const vpn = parseSubnet(vpnSubnet);
    const wanted = routesForPeers(peers, (cidr) => isInSubnet(cidr.split('/')[0] ?? '', vpn));
    const { stdout } = await run('ip', ['-4', '-o', 'route', 'show', 'dev', ifname, 'proto', 'static']);
    const present = stdout.split('\n').map((line) => line.split(' ')[0] ?? '').filter((cidr) => cidr !== '');
    for (const cidr of present.filter((c) => !wanted.includes(c))) await run('ip', ['route', 'del', cidr, 'dev', ifname, 'proto', 'static']);
    for (const cidr of wanted.filter((c) => !present.includes(c))) await run('ip', ['route', 'replace', cidr, 'dev', ifname, 'proto', 'static']);
  }

  async function syncFirewall(peers: DesiredPeer[]): Promise<void> {
    await run('iptables-restore', ['--noflush'], { input: renderFirewallRules(ifname, peers) });
    for (const rule of jumpRules(ifname)) {
      const exists = await run('iptables', ['-t', rule.table, '-C', rule.chain, ...rule.match]).then(() => true, () => false);
      if (!exists) await run('iptables', ['-t', rule.table, '-I', rule.chain, '1', ...rule.match]);
    }
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

  return {
    async ensureInterface(desired) {
      assertWgKey(desired.privateKey, 'gateway private key');
      assertPort(desired.listenPort, 'listen port');
      await mkdir(stateDir, { recursive: true, mode: 0o700 });
      if (!(await isLinkPresent(ifname))) {
        appliedGateway = null;
        appliedPeers = null;
        await createLink();
      }
      if (appliedGateway === JSON.stringify(desired)) return;
      const keyFile = join(stateDir, `${ifname}.key`);
      await writeFileAtomic(keyFile, `${desired.privateKey}\n`, 0o600);
      await run('wg', ['set', ifname, 'listen-port', String(desired.listenPort), 'private-key', keyFile]);
      await syncAddress(desired.address);
      gateway = desired;
      appliedGateway = JSON.stringify(desired);
      appliedPeers = null; // a new key or port: re-sync peers too
    },

    async syncPeers(peers) {
      if (!gateway) throw new Error('WireGuard: syncPeers before ensureInterface');
      const wanted = JSON.stringify(peers);
      if (appliedPeers === wanted) return;
      await loadEndpoints();
      await rememberEndpoints();
      // A peer that is re-added (node connected again) gets its last endpoint back, so the gateway starts the
      // handshake instead of waiting up to two minutes for the node's stale session to time out.
      const withEndpoints = peers.map((peer) => ({ ...peer, endpoint: lastEndpoints.get(peer.publicKey) ?? null }));
      const confFile = join(stateDir, `${ifname}.conf`);
      await writeFileAtomic(
        confFile,
        renderServerConfig({ privateKey: gateway.privateKey, listenPort: gateway.listenPort, peers: withEndpoints }),
        0o600,
      );
      // syncconf changes only what differs: unchanged peers keep their session, removed peers stop at once.
      await run('wg', ['syncconf', ifname, confFile]);
      await syncRoutes(peers, formatSubnet(parseSubnet(gateway.address)));
      await syncFirewall(peers);
      appliedPeers = wanted;
    },

    async dump(): Promise<WgPeerStatus[]> {
      const { stdout } = await run('wg', ['show', ifname, 'dump']);
      const peers = parseWgDump(stdout);
      for (const peer of peers) if (peer.endpoint && isIPv4Endpoint(peer.endpoint)) lastEndpoints.set(peer.publicKey, peer.endpoint);
      // Written only when an endpoint changed (nodes roam rarely), not on every 2 s poll.
      if (isEndpointsLoaded) await saveEndpoints().catch((err: unknown) => logger.warn({ err }, 'WireGuard: could not save peer endpoints'));
      return peers;
    },

    async close() {
      appliedGateway = null;
      appliedPeers = null;
      const child = userspace;
      userspace = null;
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      } else {
        await run('ip', ['link', 'del', 'dev', ifname]).catch(() => undefined);
      }
    },
  };
}
