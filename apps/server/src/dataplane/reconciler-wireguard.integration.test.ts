import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRun } from '../test/requirements.js';
import { RecordingCertificates, RecordingProxy } from './offline.js';
import { planDataPlane, planScoped } from './plan.js';
import { createReconciler, type Reconciler } from './reconciler.js';
import { EMPTY_STATE, gate, TEST_RENDER_OPTIONS, until } from './test-support.js';
import type { DesiredPeer, DesiredState, WireGuardAdapter } from './types.js';
import { createWireGuardDriver } from './wireguard/driver.js';
import { generateKeyPair, generatePresharedKey } from './wireguard/keys.js';

// A node's change beside a full run in flight (dataplane/README.md "Scoped applies"), on real WireGuard: the
// reconciler with the real driver in a network namespace of its own (nginx recorded). What `wg show` and the routes
// into the tunnel hold once the full run, which read the rows before the change, has synced its peers: the change's.

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const id = randomBytes(3).toString('hex');
const netns = `pt-rw-${id}`;
// wireguard-go's control socket path is machine-wide: the interface name must be unique per run.
const ifname = `pr${id}`;
const inNs = (...args: string[]): string => execFileSync('ip', ['netns', 'exec', netns, ...args], { encoding: 'utf8' });

/** The peers `wg show` holds: public key → allowed IPs, sorted. */
function heldPeers(): Map<string, string> {
  const lines = inNs('wg', 'show', ifname, 'allowed-ips').trim().split('\n');
  return new Map(
    lines
      .filter((line) => line !== '')
      .map((line) => {
        const [key = '', ...ips] = line.split(/\s+/);
        return [key, ips.sort().join(',')];
      }),
  );
}

const tunnelRoutes = (): string[] =>
  inNs('ip', '-4', '-o', 'route', 'show', 'dev', ifname, 'proto', 'static')
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((cidr) => cidr !== '')
    .sort();

/** What the rows say WireGuard should hold, in `heldPeers`' form. */
const wanted = (peers: readonly DesiredPeer[]): Map<string, string> =>
  new Map(peers.map((peer) => [peer.publicKey, [...peer.allowedIps].sort().join(',')]));

const node = (nodeId: number, subnet?: string): DesiredPeer => {
  const address = `10.78.0.${String(nodeId)}`;
  return {
    nodeId,
    publicKey: generateKeyPair().publicKey,
    presharedKey: generatePresharedKey(),
    address,
    allowedIps: subnet === undefined ? [`${address}/32`] : [`${address}/32`, subnet],
  };
};

describe.skipIf(!canRun('netns'))('node changes beside a full run, on real WireGuard', () => {
  let stateDir = '';
  let wg: WireGuardAdapter | undefined;
  let reconciler: Reconciler;
  const gateway = { ...EMPTY_STATE.gateway, address: '10.78.0.1/16', privateKey: generateKeyPair().privateKey };
  let rows: DesiredState = { ...EMPTY_STATE, gateway, peers: [node(2, '192.168.61.0/24'), node(3, '192.168.62.0/24')] };
  let fullReads = 0;
  let fullGate: Promise<void> | null = null;

  /** A node's change: its rows and its peer alone (no services). */
  const change = (next: DesiredState, nodeId: number) => {
    rows = next;
    return reconciler.apply({ hosts: [], http: [], nodes: [nodeId] });
  };

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'postern-rw-it-'));
    execFileSync('ip', ['netns', 'add', netns]);
    inNs('ip', 'link', 'set', 'lo', 'up');
    const driver = createWireGuardDriver({
      wgInterface: ifname,
      stateDir,
      logger: silent,
      netns,
      ports: { httpPort: 80, httpsPorts: [443], tcpPortRange: [30000, 30010] },
    });
    wg = driver;
    reconciler = createReconciler({
      loadDesiredState: async () => {
        const read = rows;
        fullReads++;
        if (fullGate) await fullGate;
        return read;
      },
      loadScopedState: (scope) => {
        const ids = new Set(scope.nodes ?? []);
        return Promise.resolve({
          hosts: [],
          http: [],
          domains: [],
          tokenNetworks: false,
          nodes: [...ids],
          peers: rows.peers.filter((peer) => ids.has(peer.nodeId)),
        });
      },
      // No services here: no backend names to look up.
      plan: (state) => planDataPlane(state, TEST_RENDER_OPTIONS, new Map()),
      planScoped: (scoped) => planScoped(scoped, TEST_RENDER_OPTIONS, new Map()),
      wireguard: driver,
      proxy: new RecordingProxy(),
      certs: new RecordingCertificates(),
      logger: silent,
    });
  }, 20_000);

  afterAll(async () => {
    await wg?.close({ keepServing: false }).catch(() => undefined);
    execFileSync('ip', ['netns', 'del', netns]);
    await rm(stateDir, { recursive: true, force: true });
  });

  it('a node disabled, and one created, while a full run that read the old rows is held: the full run keeps both changes', async () => {
    expect(await reconciler.apply()).toMatchObject({ ok: true });
    const before = rows;
    expect(heldPeers()).toEqual(wanted(before.peers));
    const held = gate();
    fullGate = held.opened;
    const reads = fullReads;
    const inFlight = reconciler.apply();
    await until(() => fullReads === reads + 1);
    fullGate = null;
    // Node 2 disabled, node 4 created: each patched at once, beside the held full run.
    const [two, three] = before.peers;
    expect(await change({ ...before, peers: [three as DesiredPeer] }, 2)).toMatchObject({ ok: true });
    const created = node(4, '192.168.64.0/24');
    const after: DesiredState = { ...before, peers: [three as DesiredPeer, created] };
    expect(await change(after, 4)).toMatchObject({ ok: true });
    expect(heldPeers()).toEqual(wanted(after.peers));
    held.open();
    expect(await inFlight).toMatchObject({ ok: true });
    // The full run's sync read node 2 enabled and knew nothing of node 4: neither is undone.
    expect(heldPeers()).toEqual(wanted(after.peers));
    expect(heldPeers().has(two?.publicKey ?? '')).toBe(false);
    expect(tunnelRoutes()).toEqual(['192.168.62.0/24', '192.168.64.0/24']);
    expect(await wg?.drift(after.peers)).toEqual([]);
  });

  it("after the driver's state was forgotten (a drift repair), a node change is made by the repair's sync", async () => {
    const before = rows;
    reconciler.forgetApplied();
    wg?.forget();
    const held = gate();
    fullGate = held.opened;
    const reads = fullReads;
    const repair = reconciler.apply();
    await until(() => fullReads === reads + 1);
    fullGate = null;
    // Node 3's subnet edited: nothing is known of what WireGuard holds, so its patch waits for the repair's sync.
    const edited = before.peers.map((peer) =>
      peer.nodeId === 3 ? { ...peer, allowedIps: [`${peer.address}/32`, '192.168.63.0/24'] } : peer,
    );
    const answered = change({ ...before, peers: edited }, 3);
    held.open();
    expect(await answered).toMatchObject({ ok: true, scopedNodes: new Set([3]) });
    expect(await repair).toMatchObject({ ok: true });
    expect(fullReads).toBe(reads + 1);
    expect(heldPeers()).toEqual(wanted(edited));
    expect(tunnelRoutes()).toEqual(['192.168.63.0/24', '192.168.64.0/24']);
  });
});
