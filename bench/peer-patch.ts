// A node's peer patch on real WireGuard (bench/README.md "peer-patch.ts"): what a scoped run's `patchPeers` costs
// for a node with a preshared key, the driver of this tree and of BENCH_BASE (a checkout of another commit, its
// dependencies installed) by turns in one process, each on an interface of its own in a network namespace this
// bench makes and removes. The node's allowed IPs alternate, so every patch sets the peer. Prints wall p50/p99 per
// patch and the ratio. Root; WireGuard tools (`wg`, and `wireguard-go` without the kernel module).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { createWireGuardDriver } from '@postern/server/src/dataplane/wireguard/driver.js';
import type { generateKeyPair, generatePresharedKey } from '@postern/server/src/dataplane/wireguard/keys.js';
import type { WireGuardAdapter } from '@postern/server/src/dataplane/types.js';
import { percentile, printTable } from './lib/stats.js';

const PATCHES = Number(process.env.BENCH_CHANGES ?? 60);
const BASE = process.env.BENCH_BASE;
const id = randomBytes(3).toString('hex');
const netns = `pt-pp-${id}`;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

async function from<T>(root: string, path: string): Promise<T> {
  return (await import(pathToFileURL(join(root, 'apps/server/src', path)).href)) as T;
}

const here = new URL('..', import.meta.url).pathname;
const keys = await from<{ generateKeyPair: typeof generateKeyPair; generatePresharedKey: typeof generatePresharedKey }>(
  here,
  'dataplane/wireguard/keys.ts',
);
const roots: [string, string][] = [['this tree', here], ...(BASE ? [[`BENCH_BASE`, BASE] as [string, string]] : [])];
const stateRoot = await mkdtemp(join(tmpdir(), 'postern-peer-patch-'));
execFileSync('ip', ['netns', 'add', netns]);
const drivers: { name: string; wg: WireGuardAdapter; times: number[] }[] = [];
try {
  for (const [index, [name, root]] of roots.entries()) {
    const { createWireGuardDriver: create } = await from<{ createWireGuardDriver: typeof createWireGuardDriver }>(
      root,
      'dataplane/wireguard/driver.ts',
    );
    const wg = create({
      wgInterface: `pp${id}${index}`,
      stateDir: join(stateRoot, String(index)),
      logger: silent,
      netns,
      ports: { httpPort: 80, httpsPorts: [443], tcpPortRange: [30000, 30010] },
    });
    await wg.ensureInterface({
      address: `10.${80 + index}.0.1/16`,
      listenPort: 51820 + index,
      privateKey: keys.generateKeyPair().privateKey,
      publicHost: '10.200.1.1',
    });
    await wg.syncPeers([]);
    drivers.push({ name, wg, times: [] });
  }
  const node = keys.generateKeyPair();
  console.log(
    `load average before: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')} (2 CPUs)`,
  );
  for (let i = -5; i < PATCHES; i++)
    for (const [index, driver] of drivers.entries()) {
      const address = `10.${80 + index}.0.2`;
      const peer = {
        nodeId: 1,
        publicKey: node.publicKey,
        presharedKey: keys.generatePresharedKey(),
        address,
        allowedIps: i % 2 === 0 ? [`${address}/32`] : [`${address}/32`, `192.168.${index}.0/24`],
      };
      const started = performance.now();
      const errors = await driver.wg.patchPeers([peer], [1]);
      if (errors === null || errors.size > 0) throw new Error(`${driver.name}: patch failed`);
      if (i >= 0) driver.times.push(performance.now() - started);
    }
  const [now, before] = drivers;
  const p50 = (d: (typeof drivers)[number] | undefined) => (d ? percentile(d.times, 50) : NaN);
  printTable(
    ['driver', 'patch p50 ms', 'p99 ms'],
    drivers.map((d) => [d.name, percentile(d.times, 50).toFixed(2), percentile(d.times, 99).toFixed(2)]),
  );
  if (before && now) console.log(`base / this (p50): ${(p50(before) / p50(now)).toFixed(2)}×`);
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')} (2 CPUs)`,
  );
} finally {
  for (const { wg } of drivers) await wg.close({ keepServing: false }).catch(() => undefined);
  execFileSync('ip', ['netns', 'del', netns]);
  await rm(stateRoot, { recursive: true, force: true });
}
