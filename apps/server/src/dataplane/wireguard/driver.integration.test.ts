import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { waitUntil } from '../../lib/wait.js';
import { canRun } from '../../test/requirements.js';
import type * as Exec from '../exec.js';
import type { DesiredPeer, WireGuardAdapter } from '../types.js';
import { createWireGuardDriver } from './driver.js';
import { generateKeyPair, generatePresharedKey, type WgKeyPair } from './keys.js';
import { renderNodeConfig } from './render.js';
import { createStatusPoller } from './status.js';

// Every command the driver runs, with what `wg set … preshared-key <file>` could read at that moment (argv is
// world-readable in /proc; so is a file with the wrong mode).
const commands = vi.hoisted(
  () => [] as { argv: string[]; keyFile?: { path: string; mode: number; content: string } }[],
);
vi.mock('../exec.js', async (importOriginal) => {
  const real = await importOriginal<typeof Exec>();
  return {
    ...real,
    runCommand: (file: string, args: readonly string[], options?: { input?: string }) => {
      const argv = [file, ...args];
      const at = argv.indexOf('preshared-key');
      const path = at === -1 ? undefined : argv[at + 1];
      commands.push({
        argv,
        ...(path && path !== '/dev/null'
          ? { keyFile: { path, mode: statSync(path).mode & 0o777, content: readFileSync(path, 'utf8') } }
          : {}),
      });
      return real.runCommand(file, args, options);
    },
  };
});

// The WireGuard driver in throw-away network namespaces: a gateway and two nodes joined by veth pairs, each
// node running wireguard-go with the config the gateway renders for it. Nothing leaves the namespaces.

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const id = randomBytes(3).toString('hex');
const ns = { gw: `pt-wg-${id}-g`, n1: `pt-wg-${id}-1`, n2: `pt-wg-${id}-2` };
// wireguard-go's control socket path is machine-wide: interface names must be unique per run.
const ifs = { gw: `pg${id}`, n1: `pa${id}`, n2: `pb${id}` };

const sh = (...args: string[]): string => execFileSync(args[0] ?? '', args.slice(1), { encoding: 'utf8' });
const inNs = (name: string, ...args: string[]): string => sh('ip', 'netns', 'exec', name, ...args);
const canPing = (from: string, to: string): boolean => {
  try {
    inNs(from, 'ping', '-c1', '-W1', to);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!canRun('netns'))('WireGuard driver in network namespaces', () => {
  const gwKeys = generateKeyPair();
  const nodeKeys: Record<'n1' | 'n2', WgKeyPair> = { n1: generateKeyPair(), n2: generateKeyPair() };
  const nodeChildren: ChildProcess[] = [];
  let stateDir = '';
  let wg: WireGuardAdapter | undefined;

  const makeDriver = (): WireGuardAdapter =>
    createWireGuardDriver({
      wgInterface: ifs.gw,
      stateDir: join(stateDir, 'gw'),
      logger: silent,
      netns: ns.gw,
      ports: { httpPort: 80, httpsPorts: [443], tcpPortRange: [30000, 30010] },
    });
  const gatewayConfig = {
    address: '10.77.0.1/16',
    listenPort: 51820,
    privateKey: gwKeys.privateKey,
    publicHost: '10.200.1.1',
  };

  const peer = (node: 'n1' | 'n2', address: string): DesiredPeer => ({
    nodeId: node === 'n1' ? 1 : 2,
    publicKey: nodeKeys[node].publicKey,
    presharedKey: null,
    address,
    allowedIps: [`${address}/32`],
  });

  async function startNode(node: 'n1' | 'n2', address: string, endpoint: string): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', ns[node], 'wireguard-go', '-f', ifs[node]], { stdio: 'ignore' });
    nodeChildren.push(child);
    await waitUntil(() => {
      try {
        inNs(ns[node], 'ip', 'link', 'show', ifs[node]);
        return true;
      } catch {
        return false;
      }
    }, 5000);
    // wg-quick's Address line is not `wg setconf` syntax: apply it with ip, the rest with wg.
    const config = renderNodeConfig({
      nodePrivateKey: nodeKeys[node].privateKey,
      nodeAddress: address,
      presharedKey: null,
      gatewayPublicKey: gwKeys.publicKey,
      endpoint,
      vpnSubnet: '10.77.0.0/16',
      allowInternet: false,
    });
    const file = join(stateDir, `${node}.conf`);
    await writeFile(file, config.replace(/^Address = .*\n/m, ''), { mode: 0o600 });
    inNs(ns[node], 'wg', 'setconf', ifs[node], file);
    inNs(ns[node], 'ip', 'address', 'add', `${address}/32`, 'dev', ifs[node]);
    inNs(ns[node], 'ip', 'link', 'set', ifs[node], 'up');
    inNs(ns[node], 'ip', 'route', 'add', '10.77.0.0/16', 'dev', ifs[node]);
  }

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'postern-wg-it-'));
    for (const name of Object.values(ns)) {
      sh('ip', 'netns', 'add', name);
      inNs(name, 'ip', 'link', 'set', 'lo', 'up');
    }
    for (const [node, net] of [
      ['n1', '1'],
      ['n2', '2'],
    ] as const) {
      const [a, b] = [`pv${id}g${net}`, `pv${id}n${net}`];
      sh('ip', 'link', 'add', a, 'netns', ns.gw, 'type', 'veth', 'peer', 'name', b, 'netns', ns[node]);
      inNs(ns.gw, 'ip', 'address', 'add', `10.200.${net}.1/24`, 'dev', a);
      inNs(ns.gw, 'ip', 'link', 'set', a, 'up');
      inNs(ns[node], 'ip', 'address', 'add', `10.200.${net}.2/24`, 'dev', b);
      inNs(ns[node], 'ip', 'link', 'set', b, 'up');
    }
    // Forwarding on, so isolation is proved by our rules and not by the namespace's default.
    inNs(ns.gw, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
    const driver = makeDriver();
    wg = driver;
    await driver.ensureInterface(gatewayConfig);
    await driver.syncPeers([peer('n1', '10.77.0.2'), peer('n2', '10.77.0.3')]);
    await startNode('n1', '10.77.0.2', '10.200.1.1:51820');
    await startNode('n2', '10.77.0.3', '10.200.2.1:51820');
  }, 20_000);

  afterAll(async () => {
    await wg?.close({ keepServing: false }).catch(() => undefined);
    for (const child of nodeChildren) child.kill('SIGTERM');
    await waitUntil(() => nodeChildren.every((c) => c.exitCode !== null || c.signalCode !== null), 5000);
    for (const name of Object.values(ns)) {
      try {
        sh('ip', 'netns', 'del', name);
      } catch {
        /* already gone */
      }
    }
    await rm(stateDir, { recursive: true, force: true });
  });

  const gateway = (): WireGuardAdapter => {
    if (!wg) throw new Error('gateway not started');
    return wg;
  };

  it('brings nodes online through the tunnel, with status from the shared dump', async () => {
    expect(await waitUntil(() => canPing(ns.gw, '10.77.0.2') && canPing(ns.gw, '10.77.0.3'), 8000, 100)).toBe(true);
    const poller = createStatusPoller({ dump: () => gateway().dump() });
    await poller.poll();
    expect(poller.get(nodeKeys.n1.publicKey)).toMatchObject({ status: 'online', clientIp: '10.200.1.2' });
    expect(poller.get(nodeKeys.n1.publicKey)?.transferRx).toBeGreaterThan(0);
  }, 15_000);

  it('keeps nodes from reaching each other, and from reaching the gateway itself but for the tunnel health port', async () => {
    expect(canPing(ns.n1, '10.77.0.3')).toBe(false);
    expect(canPing(ns.n1, '10.77.0.1')).toBe(false);
    // A control plane listening on every address (POSTERN_HOST=0.0.0.0) still does not answer over the tunnel.
    const listeners = [3000, 80].map((port) =>
      spawn(
        'ip',
        [
          'netns',
          'exec',
          ns.gw,
          process.execPath,
          '-e',
          `require('net').createServer((s) => s.end('hi')).listen(${port}, '0.0.0.0')`,
        ],
        { stdio: 'ignore' },
      ),
    );
    try {
      const answers = (port: number) => {
        try {
          return inNs(
            ns.n1,
            process.execPath,
            '-e',
            `const s = require('net').connect(${port}, '10.77.0.1'); s.setTimeout(1500, () => process.exit(2)); s.on('data', (d) => { process.stdout.write(String(d)); process.exit(0); }); s.on('error', () => process.exit(3));`,
          );
        } catch {
          return 'no answer';
        }
      };
      expect(await waitUntil(() => answers(80) === 'hi', 5000, 100)).toBe(true);
      expect(answers(3000)).toBe('no answer');
      // From the gateway side the same listener answers: only the tunnel is closed.
      expect(
        inNs(
          ns.gw,
          process.execPath,
          '-e',
          `require('net').connect(3000, '10.77.0.1').on('data', (d) => { process.stdout.write(String(d)); process.exit(0); })`,
        ),
      ).toBe('hi');
    } finally {
      for (const listener of listeners) listener.kill('SIGKILL');
    }
  }, 15_000);

  it('patches one node’s peer alone (a scoped run): set with its subnet route, then removed; the other’s session stays', async () => {
    const other = () =>
      gateway()
        .dump()
        .then((peers) => peers.find((p) => p.publicKey === nodeKeys.n2.publicKey));
    const before = (await other())?.latestHandshake;
    const n1 = { ...peer('n1', '10.77.0.2'), allowedIps: ['10.77.0.2/32', '192.168.77.0/24'] };
    const routes = () => inNs(ns.gw, 'ip', '-4', 'route', 'show', 'dev', ifs.gw, 'proto', 'static');
    // The preshared key reaches wg through a file: what the interface then holds is that key.
    const psk = generatePresharedKey();
    commands.length = 0;
    expect(await gateway().patchPeers([{ ...n1, presharedKey: psk }], [1])).toEqual(new Map());
    expect(inNs(ns.gw, 'wg', 'show', ifs.gw, 'preshared-keys')).toContain(`${nodeKeys.n1.publicKey}\t${psk}`);
    // Attacker's view: never in argv; the file was the gateway's alone (0600) while wg read it, and is gone.
    expect(commands.filter((command) => command.argv.some((arg) => arg.includes(psk)))).toEqual([]);
    const keyFiles = commands.flatMap((command) => (command.keyFile ? [command.keyFile] : []));
    expect(keyFiles.map(({ mode, content }) => ({ mode, content }))).toEqual([{ mode: 0o600, content: `${psk}\n` }]);
    expect(existsSync(keyFiles[0]?.path ?? '')).toBe(false);
    const left = await readdir(join(stateDir, 'gw'));
    for (const name of left)
      expect(await readFile(join(stateDir, 'gw', name), 'utf8').catch(() => '')).not.toContain(psk);
    // The node's own config has none: set again without, the node is back (it starts the handshake).
    expect(await gateway().patchPeers([n1], [1])).toEqual(new Map());
    expect(routes()).toContain('192.168.77.0/24');
    const reached = await waitUntil(
      () => {
        canPing(ns.n1, '10.77.0.1'); // refused by the gateway's firewall, but it makes the node handshake
        return canPing(ns.gw, '10.77.0.2');
      },
      8000,
      100,
    );
    expect(reached).toBe(true);
    expect(await gateway().drift([n1, peer('n2', '10.77.0.3')])).toEqual([]);
    // Disabled or deleted: its peer and its route go, nothing else.
    expect(await gateway().patchPeers([], [1])).toEqual(new Map());
    expect(canPing(ns.gw, '10.77.0.2')).toBe(false);
    expect(routes()).not.toContain('192.168.77.0/24');
    expect(await gateway().drift([peer('n2', '10.77.0.3')])).toEqual([]);
    expect(canPing(ns.gw, '10.77.0.3')).toBe(true);
    expect((await other())?.latestHandshake).toBe(before);
  }, 15_000);

  it('stops a removed peer’s traffic at once and leaves the other peer undisturbed', async () => {
    const before = (await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.latestHandshake;
    await gateway().syncPeers([peer('n2', '10.77.0.3')]);
    expect(canPing(ns.gw, '10.77.0.2')).toBe(false);
    expect(canPing(ns.gw, '10.77.0.3')).toBe(true);
    expect((await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.latestHandshake).toBe(before);
  });

  it('is adopted by a new driver without disturbing a peer’s session', async () => {
    const before = (await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.latestHandshake;
    await gateway().close({ keepServing: true });
    wg = makeDriver();
    await gateway().ensureInterface(gatewayConfig);
    await gateway().syncPeers([peer('n2', '10.77.0.3')]);
    expect(canPing(ns.gw, '10.77.0.3')).toBe(true);
    expect((await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.latestHandshake).toBe(before);
  });

  it('reports a peer removed behind its back, and a forced sync puts it back', async () => {
    const peers = [peer('n2', '10.77.0.3')];
    expect(await gateway().drift(peers)).toEqual([]);
    inNs(ns.gw, 'wg', 'set', ifs.gw, 'peer', nodeKeys.n2.publicKey, 'remove');
    expect(await gateway().drift(peers)).toEqual(['WireGuard lacks the peer of node 2']);
    gateway().forget();
    await gateway().syncPeers(peers);
    expect(await gateway().drift(peers)).toEqual([]);
  });

  it('remembers where a node was across a power cut, so the rebuilt interface dials it at once', async () => {
    // A control plane that adopted the interface and only polled its status before the host went down (the boot
    // sync had not run yet), with no endpoints file from earlier (an upgrade): the poll alone must save them.
    await rm(join(stateDir, 'gw', `${ifs.gw}.endpoints.json`), { force: true });
    await gateway().close({ keepServing: true });
    wg = makeDriver();
    await gateway().dump();
    // The power cut: wireguard-go goes with the control plane; the node keeps its now stale session.
    await gateway().close({ keepServing: false });
    wg = makeDriver();
    await gateway().ensureInterface(gatewayConfig);
    await gateway().syncPeers([peer('n2', '10.77.0.3')]);
    expect((await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.endpoint).toMatch(
      /^10\.200\.2\.2:\d+$/,
    );
    // Without the endpoint only the node could start the handshake, which it does when its session expires (minutes).
    expect(await waitUntil(() => canPing(ns.gw, '10.77.0.3'), 8000, 100)).toBe(true);
  }, 15_000);

  it('remembers a node that handshook after the last poll when it is stopped (docker stop right after a connect)', async () => {
    // The status poll saves endpoints every 2 s; a gateway stopped within those 2 s of a node's first handshake
    // (or of a roam) must still dial that node after its restart, or the node waits minutes for its stale session.
    await rm(join(stateDir, 'gw', `${ifs.gw}.endpoints.json`), { force: true });
    await gateway().close({ keepServing: true });
    wg = makeDriver();
    // No dump (poll) by this process: the stop comes first.
    await gateway().close({ keepServing: false });
    wg = makeDriver();
    await gateway().ensureInterface(gatewayConfig);
    await gateway().syncPeers([peer('n2', '10.77.0.3')]);
    expect((await gateway().dump()).find((p) => p.publicKey === nodeKeys.n2.publicKey)?.endpoint).toMatch(
      /^10\.200\.2\.2:\d+$/,
    );
    expect(await waitUntil(() => canPing(ns.gw, '10.77.0.3'), 8000, 100)).toBe(true);
  }, 15_000);

  it('creates the interface again, peers and routes included, when it disappears', async () => {
    inNs(ns.gw, 'ip', 'link', 'del', ifs.gw);
    expect(canPing(ns.gw, '10.77.0.3')).toBe(false);
    expect(await gateway().heal()).toBe(true);
    expect(await waitUntil(() => canPing(ns.gw, '10.77.0.3'), 8000, 100)).toBe(true);
    expect(await gateway().heal()).toBe(false);
  }, 15_000);
});
