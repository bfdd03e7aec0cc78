import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChildPids } from '../../apps/server/src/dataplane/nginx/process-info.js';
import { httpGet } from '../harness/clients.js';
import { isServerBuilt } from '../harness/gateway.js';
import { canUseNetns } from '../harness/root.js';
import { elapsedSince, waitFor } from '../harness/wait-for.js';
import { connectNode, startSystem, stopSystem, type ConnectedNode, type System } from './fixture.js';

// An HTTP change is live when the API answers, without an nginx reload (the routing overlay), and is folded into
// a new generation by a reload in the background. A system of its own: no earlier change may still be folding.

const BACKEND_PORT = 8080;
const FOLD_DEADLINE_MS = 15_000;
/**
 * The documented bound for an open connection of a disabled HTTP service: nginx's worker_shutdown_timeout (10 s)
 * after the background reload, which starts 0.5 s after the change, plus 2 s for that reload. (A client that reads
 * slower than a download arrives still drains what the kernel buffered after the gateway closed its side.)
 */
const DISABLED_CONNECTION_CLOSE_MS = 12_500;

describe.skipIf(!canUseNetns || !isServerBuilt)('HTTP changes without a reload', () => {
  let system: System;
  let node: ConnectedNode;

  const labelAt = async (url: string): Promise<string | undefined> => {
    const answer = await httpGet(system.topology.clientNs, url, { connectTo: system.topology.gatewayPublicIp });
    if (answer.status !== 200) return undefined;
    return (JSON.parse(answer.body) as { label?: string }).label;
  };

  /** The gateway's nginx workers: a reload replaces them, the overlay does not. */
  async function nginxWorkers(): Promise<number[]> {
    const master = Number((await readFile(join(system.gateway.dataDir, 'nginx', 'nginx.pid'), 'utf8')).trim());
    return (await readChildPids(master)) ?? [];
  }

  /** The overlay dir the serving generation reads is the newest one, and empty. */
  async function isFolded(): Promise<boolean> {
    const prefix = join(system.gateway.dataDir, 'nginx');
    const serving = /\/overlay\/(\d+)\//.exec(await readFile(join(prefix, 'current', 'overlay.conf'), 'utf8'))?.[1];
    const newest = Math.max(...(await readdir(join(prefix, 'overlay'))).map(Number));
    return serving === String(newest) && (await readdir(join(prefix, 'overlay', serving))).length === 0;
  }

  beforeAll(async () => {
    system = await startSystem();
    node = await connectNode(system, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
  });

  afterAll(async () => {
    expect(await stopSystem(system)).toEqual([]);
  });

  it('serves a new service on the first request after the API answered, on the same workers, then folds it in', async () => {
    const before = await nginxWorkers();
    expect(before.length).toBeGreaterThan(0);
    await system.api.createHttpService(node.node.id, { name: 'instant', domain: 'instant.e2e.test', backendHost: node.tunnelIp, backendPort: BACKEND_PORT });
    // One request, no polling: the change is live when the API answers, and no worker was replaced for it.
    expect(await labelAt('https://instant.e2e.test/now')).toBe('node1');
    expect(await nginxWorkers()).toEqual(before);

    await waitFor(async () => (await nginxWorkers()).some((pid) => !before.includes(pid)), {
      timeoutMs: FOLD_DEADLINE_MS,
      what: 'the background reload that folds the overlay into a new generation',
    });
    await waitFor(isFolded, { timeoutMs: FOLD_DEADLINE_MS, what: 'the overlay to be empty after the reload' });
    expect(await labelAt('https://instant.e2e.test/later')).toBe('node1');
  });

  it('closes an open event stream of a disabled HTTP service within the documented bound', async () => {
    const service = await system.api.createHttpService(node.node.id, { name: 'stream', domain: 'stream.e2e.test', backendHost: node.tunnelIp, backendPort: BACKEND_PORT });
    expect(await labelAt('https://stream.e2e.test/')).toBe('node1');
    // The backend never ends /trickle (a line every 100 ms): only the gateway can close it.
    const file = join(system.lab.makeTempDir('stream'), 'lines');
    const stream = system.lab.spawn(system.topology.clientNs, 'open event stream', 'curl', [
      '-sSkN', '-o', file, '--resolve', `stream.e2e.test:443:${system.topology.gatewayPublicIp}`, 'https://stream.e2e.test/trickle',
    ]);
    await waitFor(async () => (await stat(file).catch(() => null))?.size, { timeoutMs: 5000, what: 'the event stream to deliver' });

    const start = performance.now();
    await system.api.disableService(node.node.id, 'http', service.id);
    // New requests are refused at once (the domain has no service left: 404).
    expect(await labelAt('https://stream.e2e.test/')).toBeUndefined();
    await waitFor(() => !stream.isRunning, { timeoutMs: DISABLED_CONNECTION_CLOSE_MS, what: 'the open event stream to be closed' });
    expect(elapsedSince(start)).toBeLessThanOrEqual(DISABLED_CONNECTION_CLOSE_MS);
    expect(await stream.exited).not.toBe(0);
  });
});
