import path from 'node:path';
import { isIPv4, parseWgDump, type WgDumpPeer } from '@postern/contract';
import { CliError, TOOLS_MISSING_MESSAGE } from './errors.js';
import type { System } from './system.js';
import {
  ALLOWED_IPS_SLOT,
  allowedIpsWithHolder,
  isWgAddress,
  type TunnelConfig,
  type TunnelPeer,
} from './wg-config.js';

// Brings a WireGuard interface up and down the way wg-quick does, without running wg-quick (whose hooks would
// execute config text): kernel WireGuard when `ip link add … type wireguard` works, otherwise wireguard-go.

export type Implementation = 'kernel' | 'wireguard-go';

interface Tools {
  ip: string;
  wg: string;
}

/** wg-quick's table and fwmark for a full tunnel: policy routing keeps the tunnel's own UDP off the tunnel. */
const FULL_TUNNEL_TABLE = '51820';
const DEFAULT_MTU = 1420;
const USERSPACE_SOCKET_DIR = '/var/run/wireguard';

/** Linux interface names: at most 15 characters, and the characters wg-quick allows. */
export function isInterfaceName(name: string): boolean {
  return /^[A-Za-z0-9_=+.-]{1,15}$/.test(name) && name !== '.' && name !== '..';
}

export async function findTools(system: System): Promise<Tools> {
  const [ip, wg] = await Promise.all([system.which('ip'), system.which('wg')]);
  if (ip === null || wg === null) throw new CliError(TOOLS_MISSING_MESSAGE);
  return { ip, wg };
}

export async function isInterfacePresent(system: System, iface: string): Promise<boolean> {
  const { ip } = await findTools(system);
  return (await system.run(ip, ['link', 'show', 'dev', iface])).code === 0;
}

/**
 * Creates (or recreates) the interface and applies keys, peer, addresses, MTU and routes. `privateDir` (0700) holds
 * the `wg setconf` input for a moment: wg cannot read it from stdin, because Node's stdio is a socket, not a pipe.
 */
export async function bringUpTunnel(
  system: System,
  iface: string,
  config: TunnelConfig,
  privateDir: string,
): Promise<Implementation> {
  const tools = await findTools(system);
  await tearDownTunnel(system, iface);
  const implementation = await createInterface(system, tools, iface);
  const setconfFile = path.join(privateDir, `.${iface}.setconf`);
  try {
    await system.writePrivateFile(setconfFile, config.setconf);
    try {
      await runChecked(system, tools.wg, ['setconf', iface, setconfFile]);
    } finally {
      await system.removeFile(setconfFile);
    }
    for (const address of config.addresses) {
      await runChecked(system, tools.ip, [familyFlag(address), 'address', 'add', address, 'dev', iface]);
    }
    await runChecked(system, tools.ip, ['link', 'set', 'mtu', String(config.mtu ?? DEFAULT_MTU), 'up', 'dev', iface]);
    await addRoutes(system, tools, iface, config);
  } catch (error) {
    await tearDownTunnel(system, iface);
    throw error;
  }
  return implementation;
}

/** Removes the interface, its full-tunnel rules and a wireguard-go behind it. Safe to call when nothing is up. */
export async function tearDownTunnel(system: System, iface: string): Promise<void> {
  const tools = await findTools(system);
  await removeFullTunnelRules(system, tools);
  const socket = `${USERSPACE_SOCKET_DIR}/${iface}.sock`;
  if (await system.exists(socket)) {
    // wireguard-go watches its socket: removing it makes the daemon exit and take its tun device along.
    await system.removeFile(socket);
    await waitFor(system, async () => (await system.run(tools.ip, ['link', 'show', 'dev', iface])).code !== 0, 3000);
  }
  if ((await system.run(tools.ip, ['link', 'show', 'dev', iface])).code === 0) {
    await runChecked(system, tools.ip, ['link', 'delete', 'dev', iface]);
  }
}

/**
 * Applies a config whose interface part is unchanged (the gateway list changed: peers added, removed, endpoint or
 * AllowedIPs changed) on the running interface, so the node's open connections survive. `wg set` per peer, not
 * `wg syncconf`: setconf input without FwMark and ListenPort resets both, which would loop a full tunnel's own UDP
 * into the tunnel and move the node's port. `fromHolder`/`toHolder`: the peer that carries (will carry) the wide
 * routes.
 */
export async function updatePeers(
  system: System,
  iface: string,
  change: { from: TunnelConfig; fromHolder: string | null; to: TunnelConfig; toHolder: string | null },
  privateDir: string,
): Promise<void> {
  const tools = await findTools(system);
  const { from, to } = change;
  const before = allowedIpsWithHolder(from, change.fromHolder);
  const after = allowedIpsWithHolder(to, change.toHolder);
  const previous = new Map(from.peers.map((peer) => [peer.publicKey, peer]));
  // The new holder first: handing it the wide routes takes them from the old one, so they never point nowhere.
  const ordered = [...to.peers].sort(
    (a, b) => Number(b.publicKey === change.toHolder) - Number(a.publicKey === change.toHolder),
  );
  for (const peer of ordered) {
    const old = previous.get(peer.publicKey);
    const allowed = after.get(peer.publicKey) ?? [];
    const sameLines = old !== undefined && JSON.stringify(old.lines) === JSON.stringify(peer.lines);
    if (sameLines && JSON.stringify(before.get(peer.publicKey)) === JSON.stringify(allowed)) continue;
    await setPeer(system, tools, iface, peer, old, allowed, privateDir);
  }
  const kept = new Set(to.peers.map((peer) => peer.publicKey));
  for (const peer of from.peers) {
    if (!kept.has(peer.publicKey)) await runChecked(system, tools.wg, ['set', iface, 'peer', peer.publicKey, 'remove']);
  }
  const oldRoutes = routesOf(from);
  const newRoutes = routesOf(to);
  for (const route of newRoutes) if (!oldRoutes.includes(route)) await addRoute(system, tools, iface, route);
  for (const route of oldRoutes) if (!newRoutes.includes(route)) await removeRoute(system, tools, iface, route);
  if (isFullTunnelRoutes(oldRoutes) && !isFullTunnelRoutes(newRoutes)) {
    await runChecked(system, tools.wg, ['set', iface, 'fwmark', 'off']);
  }
}

/**
 * Gives the wide routes (the VPN subnet, or the default route of a full tunnel) to another peer. Routes and the
 * full tunnel's rules point at the interface, not at a peer, so only WireGuard's AllowedIPs change: the new holder
 * first (which takes the routes from the old one at once), then the old holder back to its own address.
 */
export async function moveWideRoutes(
  system: System,
  iface: string,
  config: TunnelConfig,
  from: string,
  to: string,
): Promise<void> {
  const tools = await findTools(system);
  const allowed = allowedIpsWithHolder(config, to);
  for (const key of [to, from]) {
    if (!allowed.has(key)) continue;
    await runChecked(system, tools.wg, ['set', iface, 'peer', key, 'allowed-ips', (allowed.get(key) ?? []).join(',')]);
  }
}

/** Sets a peer's endpoint again: `wg set` resolves its name anew (a gateway that moved to another address). */
export async function refreshEndpoint(system: System, iface: string, peer: TunnelPeer): Promise<void> {
  if (peer.endpoint === null) return;
  const tools = await findTools(system);
  await runChecked(system, tools.wg, ['set', iface, 'peer', peer.publicKey, 'endpoint', peer.endpoint]);
}

export async function readPeerStates(system: System, iface: string): Promise<WgDumpPeer[]> {
  const { wg } = await findTools(system);
  const result = await system.run(wg, ['show', iface, 'dump']);
  return result.code === 0 ? parseWgDump(result.stdout) : [];
}

async function createInterface(system: System, tools: Tools, iface: string): Promise<Implementation> {
  const kernel = await system.run(tools.ip, ['link', 'add', 'dev', iface, 'type', 'wireguard']);
  if (kernel.code === 0) return 'kernel';
  if (/Operation not permitted/i.test(kernel.stderr)) {
    throw new CliError(`Creating ${iface} needs root (or CAP_NET_ADMIN): Operation not permitted`);
  }
  const wireguardGo = await system.which('wireguard-go');
  if (wireguardGo === null) throw new CliError(TOOLS_MISSING_MESSAGE);
  // Without -f wireguard-go forks into the background once the device and its control socket exist,
  // so the tunnel outlives this process (plain `connect`) and `disconnect` can stop it through the socket.
  const started = await system.run(wireguardGo, [iface]);
  if (started.code !== 0) throw new CliError(`wireguard-go could not create ${iface}: ${firstLine(started.stderr)}`);
  return 'wireguard-go';
}

async function addRoutes(system: System, tools: Tools, iface: string, config: TunnelConfig): Promise<void> {
  for (const route of routesOf(config)) await addRoute(system, tools, iface, route);
}

/** Every peer's AllowedIPs, whichever peer holds them: the routes the interface needs. */
function routesOf(config: TunnelConfig): string[] {
  return config.allowedIps.filter((route) => isWgAddress(route) && !config.addresses.includes(route));
}

function isFullTunnelRoutes(routes: string[]): boolean {
  return routes.some((route) => /\/0$/.test(route));
}

async function addRoute(system: System, tools: Tools, iface: string, route: string): Promise<void> {
  if (/\/0$/.test(route)) await addFullTunnelRoute(system, tools, iface, route);
  else await runChecked(system, tools.ip, [familyFlag(route), 'route', 'replace', route, 'dev', iface]);
}

/** A route already gone is fine: the goal is its absence. */
async function removeRoute(system: System, tools: Tools, iface: string, route: string): Promise<void> {
  const family = familyFlag(route);
  if (!/\/0$/.test(route)) {
    await system.run(tools.ip, [family, 'route', 'delete', route, 'dev', iface]);
    return;
  }
  await system.run(tools.ip, [family, 'route', 'delete', route, 'dev', iface, 'table', FULL_TUNNEL_TABLE]);
  await deleteFullTunnelRules(system, tools, family);
}

/** The two policy rules addFullTunnelRoute adds, for one address family (absent rules are fine). */
async function deleteFullTunnelRules(system: System, tools: Tools, family: string): Promise<void> {
  await system.run(tools.ip, [
    family,
    'rule',
    'delete',
    'not',
    'fwmark',
    FULL_TUNNEL_TABLE,
    'table',
    FULL_TUNNEL_TABLE,
  ]);
  await system.run(tools.ip, [family, 'rule', 'delete', 'table', 'main', 'suppress_prefixlength', '0']);
}

/** One `wg set … peer` with every setting of the peer; a preshared key goes through a private file, never argv. */
async function setPeer(
  system: System,
  tools: Tools,
  iface: string,
  peer: TunnelPeer,
  old: TunnelPeer | undefined,
  allowedIps: string[],
  privateDir: string,
): Promise<void> {
  const args = ['set', iface, 'peer', peer.publicKey];
  const value = (key: string) =>
    peer.lines.find((line) => line !== ALLOWED_IPS_SLOT && line.startsWith(`${key} = `))?.slice(key.length + 3);
  const hadPresharedKey = old?.lines.some((line) => line.startsWith('PresharedKey = ')) ?? false;
  const presharedKey = value('PresharedKey');
  const pskFile = path.join(privateDir, `.${iface}.psk`);
  if (presharedKey !== undefined) {
    await system.writePrivateFile(pskFile, `${presharedKey}\n`);
    args.push('preshared-key', pskFile);
  } else if (hadPresharedKey) {
    args.push('preshared-key', '/dev/null');
  }
  const endpoint = value('Endpoint');
  if (endpoint !== undefined) args.push('endpoint', endpoint);
  const keepalive = value('PersistentKeepalive');
  if (keepalive !== undefined || old !== undefined) args.push('persistent-keepalive', keepalive ?? 'off');
  args.push('allowed-ips', allowedIps.join(','));
  try {
    await runChecked(system, tools.wg, args);
  } finally {
    if (presharedKey !== undefined) await system.removeFile(pskFile);
  }
}

/** wg-quick's recipe: tunnel packets carry the fwmark and use the main table; everything else uses the tunnel. */
async function addFullTunnelRoute(system: System, tools: Tools, iface: string, route: string): Promise<void> {
  const family = familyFlag(route);
  await runChecked(system, tools.wg, ['set', iface, 'fwmark', FULL_TUNNEL_TABLE]);
  await runChecked(system, tools.ip, [family, 'route', 'replace', route, 'dev', iface, 'table', FULL_TUNNEL_TABLE]);
  await runChecked(system, tools.ip, [
    family,
    'rule',
    'add',
    'not',
    'fwmark',
    FULL_TUNNEL_TABLE,
    'table',
    FULL_TUNNEL_TABLE,
  ]);
  await runChecked(system, tools.ip, [family, 'rule', 'add', 'table', 'main', 'suppress_prefixlength', '0']);
}

async function removeFullTunnelRules(system: System, tools: Tools): Promise<void> {
  for (const family of ['-4', '-6']) {
    const rules = await system.run(tools.ip, [family, 'rule', 'show']);
    if (rules.code !== 0) continue;
    if (rules.stdout.includes(`lookup ${FULL_TUNNEL_TABLE}`)) await deleteFullTunnelRules(system, tools, family);
  }
}

async function runChecked(system: System, command: string, args: string[]): Promise<void> {
  const result = await system.run(command, args);
  if (result.code !== 0) {
    const name = command.split('/').pop() ?? command;
    throw new CliError(
      `${name} ${args.slice(0, 3).join(' ')} failed: ${firstLine(result.stderr) || `exit code ${result.code}`}`,
    );
  }
}

async function waitFor(system: System, condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = system.now() + timeoutMs;
  while (system.now() < deadline) {
    if (await condition()) return true;
    await system.sleep(50);
  }
  return condition();
}

function familyFlag(cidr: string): '-4' | '-6' {
  return isIPv4(cidr.split('/')[0] ?? '') ? '-4' : '-6';
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
