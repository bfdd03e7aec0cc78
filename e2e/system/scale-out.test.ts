import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { operations, type Domain, type HttpService, type NodeCreated } from '@postern/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../harness/api.js';
import { startBackend } from '../harness/backends.js';
import { httpGet, type HttpAnswer } from '../harness/clients.js';
import { WG_PORT } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { listNamespaceProcesses } from '../harness/netns-processes.js';
import { createAcmeNetwork, startPebble } from '../harness/pebble.js';
import { elapsedSince, waitFor } from '../../apps/server/src/test/wait-for.js';
import { startWireguard, type WireguardInterface } from '../harness/wireguard.js';
import { startCluster, type Cluster, type ClusterGateway, type GatewayName } from './cluster.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// Three gateways (each its own host: server, nginx, wireguard-go) on one PostgreSQL,
// one node whose tunnel has a peer per gateway (its wg-quick config downloaded from the API, as connectNode does),
// clients on the internet. One lab for the whole file (its setup is most of the cost); the tests run in order and
// the destructive ones come last: PostgreSQL stopped and started, then gw-a killed for good.

const BACKEND_PORT = 8080;
const BASE_DOMAIN = 'base.e2e.test';
/** A change made through any gateway is served by all of them within 1 s. */
const PROPAGATION_BOUND_MS = 1000;
/** Boot, the first handshake (wireguard-go retries every 5 s) and the first apply. */
const SERVED_DEADLINE_MS = 20_000;
const ISSUANCE_TIMEOUT_MS = 30_000;
/** The store's connect timeout is 5 s (a refused connection is told at once), as in postgres.test.ts. */
const WRITE_RESUME_DEADLINE_MS = 30_000;
/** A LISTEN connection lost in the outage is re-opened with back-off (0.5 s doubling): the applies after it. */
const RELISTEN_DEADLINE_MS = 30_000;
/** The CA namespace's address on the internet bridge. */
const CA_INTERNET_INDEX = 10;
const NODE_INTERNET_INDEX = 11;

interface ConfigPeer {
  publicKey: string;
  endpoint: string;
  allowedIps: string[];
}

/** The [Peer] sections of a wg-quick config, in order. */
function peersOf(config: string): ConfigPeer[] {
  const peers: ConfigPeer[] = [];
  let current: ConfigPeer | undefined;
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    if (/^\[Peer\]$/i.test(line)) peers.push((current = { publicKey: '', endpoint: '', allowedIps: [] }));
    else if (/^\[/.test(line)) current = undefined;
    const match = /^(\w+)\s*=\s*(.*)$/.exec(line);
    if (current === undefined || match === null) continue;
    const [, key = '', value = ''] = match;
    if (key.toLowerCase() === 'publickey') current.publicKey = value;
    if (key.toLowerCase() === 'endpoint') current.endpoint = value;
    if (key.toLowerCase() === 'allowedips') current.allowedIps.push(...value.split(',').map((ip) => ip.trim()));
  }
  return peers;
}

const names = (gateways: readonly ClusterGateway[]): string => gateways.map((gateway) => gateway.name).join(', ');

/** The API's error answer (status and stable code), or a test failure naming what came instead. */
function errorAnswer(error: unknown): { status: number; code: unknown } {
  if (!(error instanceof ApiError)) throw error instanceof Error ? error : new Error(String(error));
  return { status: error.status, code: (JSON.parse(error.body) as { code?: unknown }).code };
}

/** The TLS handshake with host:443 for `servername`, trusting only `ca`: the certificate presented. */
function handshakeTrusting(host: string, servername: string, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: 443, servername, ca, timeout: 5000 }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('timeout', () => socket.destroy(new Error(`TLS handshake for ${servername} via ${host}: timed out`)));
    socket.on('error', reject);
  });
}

describe.skipIf(!canRun('netns', 'server-build', 'postgres-binaries'))('three gateways on one PostgreSQL', () => {
  const lab = new Lab();
  const certDomain = `cert-${lab.id}.test`;
  const netnsEtcDirs: string[] = [];
  let cluster: Cluster | undefined;
  let pebbleRoot = '';
  let node: NodeCreated;
  let nodeWg: WireguardInterface | undefined;
  let nodeNs = '';
  let tunnelIp = '';
  /** The node's config as the API gave it once all three gateways were up. */
  let nodeConfig = '';

  const the = (): Cluster => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    return cluster;
  };
  const gw = (name: GatewayName): ClusterGateway => the().gateway(name);
  const clientNs = (): string => the().topology.clientNs;
  /** Allowed by the access lists the tests set; the other one is refused. */
  const allowedClient = (): string => the().topology.clientIps[0];
  const refusedClient = (): string => the().topology.clientIps[1];

  const fetchThrough = (gateway: ClusterGateway, domain: string, sourceIp?: string): Promise<HttpAnswer> =>
    httpGet(clientNs(), `https://${domain}/`, {
      connectTo: gateway.host.publicIp,
      timeoutMs: 2000,
      ...(sourceIp === undefined ? {} : { sourceIp }),
    });
  const servedFromNode = (answer: HttpAnswer): boolean => answer.status === 200 && answer.body.includes('"node1"');
  const serves = async (gateway: ClusterGateway, domain: string): Promise<boolean> =>
    servedFromNode(await fetchThrough(gateway, domain, allowedClient()));
  /** The route is in the gateway's nginx: a client outside its access list is refused (404 while it is unknown). */
  const knowsRoute = async (gateway: ClusterGateway, domain: string): Promise<boolean> =>
    (await fetchThrough(gateway, domain, refusedClient())).status === 403;

  const createService = (through: ClusterGateway, name: string, domain: string): Promise<HttpService> =>
    through.api.createHttpService(node.id, {
      name,
      domain,
      backendHost: tunnelIp,
      backendPort: BACKEND_PORT,
      allowedIps: [allowedClient()],
    });

  /** Polls every gateway at once until `check` holds on each; how long each took, from `since`. */
  const timeUntilEach = async (
    gateways: readonly ClusterGateway[],
    check: (gateway: ClusterGateway) => Promise<boolean>,
    since: number,
    timeoutMs: number,
    what: string,
  ): Promise<Record<string, number>> => {
    const figures = await Promise.all(
      gateways.map(async (gateway) => {
        await waitFor(() => check(gateway), { timeoutMs, intervalMs: 20, what: `${gateway.name} ${what}` });
        return [gateway.name, elapsedSince(since)] as const;
      }),
    );
    return Object.fromEntries(figures);
  };

  /** Clients fetching the node's service through each of `gateways`, one request after another, until stopped. */
  const fetchLoop = (gateways: readonly ClusterGateway[], domain: string) => {
    const ok: Record<string, number> = {};
    const failed: Record<string, string[]> = {};
    const stop = new AbortController();
    const loops = gateways.map(async (gateway) => {
      ok[gateway.name] = 0;
      failed[gateway.name] = [];
      while (!stop.signal.aborted) {
        const answer = await fetchThrough(gateway, domain, allowedClient());
        if (servedFromNode(answer)) ok[gateway.name] = (ok[gateway.name] ?? 0) + 1;
        else failed[gateway.name]?.push(`${answer.status} ${answer.error}`.trim());
      }
    });
    return {
      ok,
      failed,
      /** Waits until each gateway has served `count` more requests than it had when called. */
      async servedMore(count: number, timeoutMs: number, what: string): Promise<void> {
        const from = { ...ok };
        await waitFor(
          () => {
            if (gateways.every((gateway) => (ok[gateway.name] ?? 0) >= (from[gateway.name] ?? 0) + count)) return true;
            throw new Error(`served ${JSON.stringify(ok)}, failed ${JSON.stringify(failed)}`);
          },
          { timeoutMs, what: `${count} requests served through each of ${names(gateways)} ${what}` },
        );
      },
      async stop(): Promise<void> {
        stop.abort();
        await Promise.all(loops);
      },
    };
  };

  beforeAll(async () => {
    cluster = await startCluster(lab, {
      // The test CA: pebble fetches HTTP-01 answers from a gateway's public address, and every gateway resolves names
      // through challtestsrv (a resolv.conf per namespace, which `ip netns exec` mounts) and reaches pebble by the
      // bridge, as in acme-gateway.test.ts.
      async prepare(topology, hosts) {
        const network = await createAcmeNetwork(lab);
        await topology.internet.attach(network.ns, 'ca', [CA_INTERNET_INDEX]);
        for (const host of hosts) {
          await lab.addRoute(host.ns, `${network.caIp}/32`, topology.internet.ip(CA_INTERNET_INDEX));
          const etc = join('/etc/netns', host.ns);
          netnsEtcDirs.push(etc);
          mkdirSync(etc, { recursive: true });
          writeFileSync(join(etc, 'resolv.conf'), `nameserver ${network.caIp}\noptions timeout:2 attempts:1\n`);
        }
        const pebble = await startPebble(lab, { network, httpPort: 80 });
        // The certificate's domain points at gw-c only: whichever gateway orders it, gw-c must answer the challenge.
        await pebble.pointDomain(certDomain, hosts[2]?.publicIp ?? '');
        pebbleRoot = await pebble.fetchIssuingRoot();
        return {
          POSTERN_ACME_DIRECTORY: pebble.directoryUrl,
          POSTERN_ACME_EMAIL: 'e2e@example.com',
          POSTERN_ACME_CA_FILE: pebble.apiCaFile,
        };
      },
    });

    const a = gw('gw-a');
    const nodeStart = performance.now();
    node = await a.api.createNode({ name: 'e2e-node1' });
    if (node.address === null) throw new Error('the node has no tunnel address');
    tunnelIp = node.address;
    nodeConfig = await a.api.downloadNodeConfig(node.id);
    const host = await the().topology.addHost('node1', NODE_INTERNET_INDEX);
    nodeNs = host.ns;
    nodeWg = await startWireguard(lab, nodeNs, lab.ifName('node1'), nodeConfig);
    await startBackend(lab, nodeNs, 'http', tunnelIp, BACKEND_PORT, 'node1');
    await createService(a, 'base', BASE_DOMAIN);
    // What today's single-peer design already gives: the node served through the gateway the config was made by.
    await waitFor(() => serves(a, BASE_DOMAIN), {
      timeoutMs: SERVED_DEADLINE_MS,
      what: `${BASE_DOMAIN} to be served from the node through gw-a`,
    });
    console.info(
      `setup: ${JSON.stringify(the().setupMs)} ms, then the node served after ${elapsedSince(nodeStart)} ms`,
    );
  }, 120_000);

  afterAll(async () => {
    const started = performance.now();
    try {
      await cluster?.postgres.stop();
      await lab.destroy();
      console.info(`teardown: ${elapsedSince(started)} ms`);
      expect(lab.leftovers()).toEqual([]);
    } finally {
      for (const dir of netnsEtcDirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the node a peer per gateway, dialled at its own endpoint, and every gateway serves the node', async () => {
    const peers = peersOf(nodeConfig);
    // In the order the gateways registered (they boot together, so any order).
    expect(peers.map((peer) => peer.endpoint).sort()).toEqual(
      the()
        .gateways.map((gateway) => `${gateway.host.publicIp}:${WG_PORT}`)
        .sort(),
    );
    // Each gateway has its own key and tunnel address; the first peer alone carries the wide route.
    expect(new Set(peers.map((peer) => peer.publicKey)).size).toBe(3);
    const addresses = peers.map((peer) => peer.allowedIps[0] ?? '');
    expect(addresses.every((address) => address.endsWith('/32'))).toBe(true);
    expect(new Set(addresses).size).toBe(3);
    expect(peers[0]?.allowedIps).toContain('10.44.0.0/16');

    const wg = nodeWg;
    if (wg === undefined) throw new Error('the node has no tunnel');
    await waitFor(
      async () => {
        const lines = (await wg.dump()).trim().split('\n').slice(1);
        return lines.length === 3 && lines.every((line) => Number(line.split('\t')[4]) > 0);
      },
      { timeoutMs: SERVED_DEADLINE_MS, what: "a handshake with each of the node's three peers" },
    );
    for (const [index, gateway] of the().gateways.entries()) {
      await waitFor(() => serves(gateway, BASE_DOMAIN), {
        timeoutMs: SERVED_DEADLINE_MS,
        what: `${BASE_DOMAIN} to be served from the node through ${gateway.name}`,
      });
      // The node reaches each gateway on that gateway's own tunnel address.
      const address = (addresses[index] ?? '').replace(/\/32$/, '');
      const health = await httpGet(nodeNs, `http://${address}:80/_postern/tunnel-health`, { sourceIp: tunnelIp });
      expect({ gateway: gateway.name, status: health.status, body: health.body.trim() }).toEqual({
        gateway: gateway.name,
        status: 200,
        body: 'ok',
      });
    }
  }, 90_000);

  it('puts a route created through gw-a into the nginx of gw-b and gw-c within 1 s', async () => {
    const domain = 'route.e2e.test';
    const others = [gw('gw-b'), gw('gw-c')];
    // Before the change the route is unknown (404), not refused: the 403 below can only come from the new route.
    for (const gateway of others)
      expect((await fetchThrough(gateway, domain, refusedClient())).status, gateway.name).toBe(404);

    const started = performance.now();
    await createService(gw('gw-a'), 'route', domain);
    const apiMs = elapsedSince(started);
    const answered = performance.now();
    const figures = await timeUntilEach(
      others,
      (gateway) => knowsRoute(gateway, domain),
      answered,
      PROPAGATION_BOUND_MS,
      `to have the route of ${domain}`,
    );
    console.info(
      `route in gw-b's and gw-c's nginx ${JSON.stringify(figures)} ms after gw-a answered the create (in ${apiMs} ms)`,
    );
  });

  it('serves a service created through gw-a from the node through gw-b and gw-c within 1 s', async () => {
    const domain = 'fresh.e2e.test';
    const others = [gw('gw-b'), gw('gw-c')];
    for (const gateway of others) expect(await serves(gateway, domain), gateway.name).toBe(false);
    await createService(gw('gw-a'), 'fresh', domain);
    const answered = performance.now();
    const figures = await timeUntilEach(
      others,
      (gateway) => serves(gateway, domain),
      answered,
      PROPAGATION_BOUND_MS,
      `to serve ${domain} from the node`,
    );
    console.info(`served after gw-a's answer: ${JSON.stringify(figures)} ms`);
  });

  it('serves one certificate, ordered once from the test CA, from all three gateways', async () => {
    // Created through gw-c, where the domain points (its "points here" check passes by DNS); the order and the
    // challenge go through whichever gateway runs the certificate jobs.
    const created = await gw('gw-c').api.call(operations.createDomain, {
      body: { domain: certDomain, ssl: 'certbot', skipValidation: false },
    });
    const issued: Domain = await waitFor(
      async () => {
        const domain = await gw('gw-c').api.call(operations.getDomain, { params: { id: created.id } });
        if (domain.certificate?.state === 'failed')
          throw new Error(`issuance failed: ${domain.certificate.error ?? '?'}`);
        return domain.certificate?.state === 'valid' && domain;
      },
      { timeoutMs: ISSUANCE_TIMEOUT_MS, intervalMs: 200, what: `a valid certificate for ${certDomain}` },
    ).catch((error: unknown) => {
      const logs = the()
        .gateways.map((gateway) => `--- ${gateway.name}:\n${gateway.gateway.process.text.slice(-1500)}`)
        .join('\n');
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`);
    });
    const fingerprint = issued.certificate?.fingerprint;
    expect(fingerprint).toEqual(expect.any(String));

    const started = performance.now();
    const figures = await timeUntilEach(
      the().gateways,
      async (gateway) =>
        (await handshakeTrusting(gateway.host.mgmtIp, certDomain, pebbleRoot)).fingerprint256 === fingerprint,
      started,
      10_000,
      `to serve pebble's certificate for ${certDomain}`,
    );
    // Ordered once: exactly one gateway asked the CA (its log says so, as acme-gateway.test.ts reads it).
    const orderedBy = the()
      .gateways.filter((gateway) => gateway.gateway.process.text.includes('requesting from the ACME CA'))
      .map((gateway) => gateway.name);
    expect(orderedBy).toHaveLength(1);
    for (const gateway of the().gateways) {
      const seen = await gateway.api.call(operations.getDomain, { params: { id: created.id } });
      expect(seen.certificate, gateway.name).toMatchObject({ state: 'valid', fingerprint });
    }
    console.info(
      `certificate ordered by ${orderedBy.join(', ')}; served by all three after ${JSON.stringify(figures)} ms`,
    );
  }, 60_000);

  it('keeps serving through all three while PostgreSQL is stopped, answers writes 503, and takes them once it is back', async () => {
    const everyGateway = the().gateways;
    const loop = fetchLoop(everyGateway, BASE_DOMAIN);
    const figures: Record<string, unknown> = {};
    try {
      await loop.servedMore(3, 10_000, 'before the outage');
      await the().postgres.stop();
      const downAt = performance.now();
      const write = (gateway: ClusterGateway) =>
        createService(gateway, `after-${gateway.name}`, `after-${gateway.name}.e2e.test`);
      const refused = await Promise.all(
        everyGateway.map(async (gateway) => ({
          gateway: gateway.name,
          ...(await write(gateway).then(
            () => ({ status: 201, code: 'created while the database was down' }),
            errorAnswer,
          )),
        })),
      );
      figures.unavailableAfterMs = elapsedSince(downAt);
      expect(refused).toEqual(
        everyGateway.map((gateway) => ({ gateway: gateway.name, status: 503, code: 'database_unavailable' })),
      );
      await loop.servedMore(10, 20_000, 'while PostgreSQL is down');

      await the().postgres.start();
      const upAt = performance.now();
      // Until a gateway's store has a live connection again its write is refused the same way; anything else is a bug.
      figures.writeResumedAfterMs = await timeUntilEach(
        everyGateway,
        (gateway) =>
          write(gateway).then(
            () => true,
            (error: unknown) => {
              const answer = errorAnswer(error);
              if (answer.status === 503 && answer.code === 'database_unavailable') return false;
              throw new Error(
                `${gateway.name}'s write answered ${answer.status} ${String(answer.code)} after the start`,
              );
            },
          ),
        upAt,
        WRITE_RESUME_DEADLINE_MS,
        'to take a write again',
      );
      // Each gateway hears the others again (its LISTEN connection was re-opened): every route written after the
      // outage, through whichever gateway, is in every gateway's nginx.
      const afterUp = performance.now();
      figures.everyRouteEverywhereAfterMs = await timeUntilEach(
        everyGateway,
        async (gateway) => {
          for (const writer of everyGateway)
            if (!(await knowsRoute(gateway, `after-${writer.name}.e2e.test`))) return false;
          return true;
        },
        afterUp,
        RELISTEN_DEADLINE_MS,
        'to have the routes written through every gateway after the outage',
      );
    } finally {
      await loop.stop();
      // A failure above must not leave the next test without its database.
      if (!the().postgres.isRunning) await the().postgres.start();
    }
    expect(loop.failed).toEqual({ 'gw-a': [], 'gw-b': [], 'gw-c': [] });
    console.info(`PostgreSQL outage: served ${JSON.stringify(loop.ok)}, 0 failed; ${JSON.stringify(figures)}`);
  }, 120_000);

  it('keeps serving through gw-b and gw-c, and the node reachable, after SIGKILL of all of gw-a', async () => {
    const [a, b, c] = [gw('gw-a'), gw('gw-b'), gw('gw-c')];
    const survivors = [b, c];
    const loop = fetchLoop(survivors, BASE_DOMAIN);
    let killedAt = 0;
    try {
      await loop.servedMore(3, 10_000, 'before the kill');
      const dataPlane = (await listNamespaceProcesses(a.host.ns)).map(({ command }) => command);
      expect(dataPlane.some((command) => command.startsWith('nginx'))).toBe(true);
      expect(dataPlane.some((command) => command.startsWith('wireguard-go'))).toBe(true);
      await a.killHost();
      killedAt = performance.now();
      await waitFor(async () => (await listNamespaceProcesses(a.host.ns)).length === 0, {
        timeoutMs: 5000,
        what: "every process of gw-a's host to end",
      });
      expect((await fetchThrough(a, BASE_DOMAIN, allowedClient())).status, 'gw-a is gone').toBe(0);
      await loop.servedMore(20, 20_000, 'after the kill');
    } finally {
      await loop.stop();
    }
    expect(loop.failed).toEqual({ 'gw-b': [], 'gw-c': [] });

    // The node still reaches the survivors on their tunnel addresses, and they show it online.
    const peers = peersOf(nodeConfig);
    for (const gateway of survivors) {
      // The peer dialled at this gateway's endpoint: its first AllowedIPs entry is the gateway's tunnel address.
      const peer = peers.find((candidate) => candidate.endpoint === `${gateway.host.publicIp}:${WG_PORT}`);
      const address = (peer?.allowedIps[0] ?? '').replace(/\/32$/, '');
      const health = await httpGet(nodeNs, `http://${address}:80/_postern/tunnel-health`, {
        sourceIp: tunnelIp,
      });
      expect({ gateway: gateway.name, status: health.status }).toEqual({ gateway: gateway.name, status: 200 });
      expect((await gateway.api.getNode(node.id)).status, gateway.name).toBe('online');
    }
    // The survivors still take changes and hear each other without gw-a.
    await createService(b, 'after-kill', 'after-kill.e2e.test');
    const answered = performance.now();
    const figures = await timeUntilEach(
      [c],
      (gateway) => knowsRoute(gateway, 'after-kill.e2e.test'),
      answered,
      PROPAGATION_BOUND_MS,
      'to have the route written through gw-b',
    );
    console.info(
      `gw-a killed: served ${JSON.stringify(loop.ok)} through the survivors, 0 failed (${elapsedSince(killedAt)} ms after the kill); change through gw-b on gw-c after ${JSON.stringify(figures)} ms`,
    );
  }, 90_000);
});
