import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChildPids } from '../../apps/server/src/dataplane/nginx/process-info.js';
import { httpGet } from '../harness/clients.js';
import { startGateway, type Gateway } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { listNamespaceProcesses } from '../harness/netns-processes.js';
import { createSystemTopology, type SystemTopology } from '../harness/topology.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The README's start command (the supervisor the run command, the image and the systemd unit run), with its data
// directory where a checkout under /root puts it: below a directory only root may enter.
// nginx's workers run as www-data and cannot enter it, yet HTTPS works (they read nothing from there). SIGHUP restarts
// the control plane alone, which takes over the running nginx; SIGTERM stops everything the command started.

const STOP_BOUND_MS = 5000;

describe.skipIf(!canRun('netns', 'server-build'))('the start command', () => {
  const lab = new Lab();
  let topology: SystemTopology;
  let gateway: Gateway;

  const processes = async (pattern: RegExp) =>
    (await listNamespaceProcesses(topology.gatewayNs)).filter((p) => pattern.test(p.command));
  const httpsWorks = async () =>
    (await httpGet(topology.clientNs, `https://${topology.gatewayPublicIp}/api/health`, { timeoutMs: 3000 })).status ===
    200;
  const controlPlanePid = async (): Promise<number | undefined> => (await readChildPids(gateway.process.pid))?.[0];

  beforeAll(async () => {
    topology = await createSystemTopology(lab);
    // Like /root: mode 0700, owned by root. The data directory is the default ./data of a checkout inside it.
    const home = lab.makeTempDir('root-home');
    chmodSync(home, 0o700);
    const dataDir = join(home, 'postern', 'data');
    mkdirSync(dataDir, { recursive: true });
    gateway = await startGateway(lab, {
      ns: topology.gatewayNs,
      apiIp: topology.gatewayMgmtIp,
      publicHost: topology.gatewayPublicIp,
      wgInterface: lab.ifName('gw'),
      entry: 'start-command',
      dataDir,
    });
  });

  afterAll(async () => {
    await lab.destroy();
    expect(lab.leftovers()).toEqual([]);
  });

  it('serves the console over HTTPS although nginx’s workers cannot enter the data directory', async () => {
    await waitFor(httpsWorks, { timeoutMs: 15_000, what: 'the console over HTTPS through nginx' });
    expect(gateway.process.text).not.toContain('nginx does not answer HTTPS');
    expect(gateway.process.text).not.toMatch(/Permission denied/);
  });

  it('boots for the first time without an error or a warning in its log', async () => {
    await waitFor(() => gateway.process.text.includes('data plane rebuilt from the database'), {
      timeoutMs: 15_000,
      what: 'the first boot to converge',
    });
    const complaints = gateway.process.text
      .split('\n')
      .filter((line) => /"level":(40|50|60)\b/.test(line))
      // The harness publishes the API on the management address (POSTERN_HOST=0.0.0.0): that warning is the operator's.
      .filter((line) => !line.includes('POSTERN_HOST'));
    expect(complaints).toEqual([]);
  });

  it('restarts the control plane alone on SIGHUP: the same nginx keeps serving', async () => {
    const before = await controlPlanePid();
    const [master] = await processes(/^nginx: master .*\/current\/nginx\.conf/);
    expect(before).toBeDefined();
    gateway.process.kill('SIGHUP');
    await waitFor(
      async () => {
        const now = await controlPlanePid();
        return (
          now !== undefined &&
          now !== before &&
          (await gateway.login().then(
            () => true,
            () => false,
          ))
        );
      },
      { timeoutMs: 20_000, what: 'a new control plane answering' },
    );
    expect((await processes(/^nginx: master .*\/current\/nginx\.conf/)).map((p) => p.pid)).toEqual([master?.pid]);
    expect(await httpsWorks()).toBe(true);
  });

  it('stops the control plane, nginx and wireguard-go on SIGTERM', async () => {
    expect(await processes(/^nginx: /)).not.toEqual([]);
    expect(await processes(/^wireguard-go /)).not.toEqual([]);
    const start = performance.now();
    gateway.process.kill('SIGTERM');
    expect(await gateway.process.exited).toBe(0);
    await waitFor(async () => (await processes(/^(nginx: |wireguard-go |node )/)).length === 0, {
      timeoutMs: STOP_BOUND_MS,
      intervalMs: 50,
      what: 'nothing the start command started to be left',
    });
    expect(elapsedSince(start)).toBeLessThanOrEqual(STOP_BOUND_MS);
  });
});
