import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { publicKeyFromPrivate } from '../dataplane/wireguard/keys.js';
import { insertNode } from '../modules/services/test-support.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { gatewaySettingsFor } from '../create-data-plane.js';
import { openSqliteStore, sqliteClientOf } from './client.js';
import {
  loadDesiredState,
  loadScopedState,
  loadStreamState,
  SCOPE_VALUES_PER_QUERY,
  STATE_PAGE_ROWS,
} from './desired-state.js';
import { readGatewayPrivateKey } from './gateway-key.js';
import { resolveMigrationsDir } from './migrations-dir.js';
import { accessPolicies, domains, gateways, httpServices, nodes, settings, tcpServices } from './schema.js';

/** What a domain orders with when nothing else was chosen (docs/api.md "Certificates"). */
const http01 = { challenge: 'http-01', dnsProviderId: null, acmeCaId: null } as const;
let t: TestApp;

beforeEach(async () => {
  t = await buildTestApp({ env: { POSTERN_VPN_SUBNET: '10.50.0.0/16', POSTERN_WG_PORT: '51999' } });
});
afterEach(async () => {
  await t.cleanup();
});

const load = async () => await loadDesiredState(t.deps, gatewaySettingsFor(t.config, t.deps.gateway));

const httpRow = { name: 'web', pathLocation: '/', backendHost: 'ignored', backendPort: 80 };

/**
 * The embedded engine's statements from now until vi.restoreAllMocks(), each as its number of variables (drizzle runs
 * a read with all() or get()); none counted on PostgreSQL.
 */
function countStatements(): number[] {
  const variables: number[] = [];
  if (t.db.engine !== 'sqlite') return variables;
  const statement = Object.getPrototypeOf(sqliteClientOf(t.db).prepare('select 1')) as Record<
    'all' | 'get',
    (...params: unknown[]) => unknown
  >;
  for (const method of ['all', 'get'] as const) {
    const original = statement[method];
    vi.spyOn(statement, method).mockImplementation(function (this: unknown, ...params: unknown[]) {
      variables.push(params.length);
      return original.apply(this, params);
    });
  }
  return variables;
}

const tcpRow = { name: 'db', proto: 'tcp' as const, backendHost: 'ignored', backendPort: 5432 };

describe('loadDesiredState', () => {
  test('only reads: before the gateway registered it fails and stores nothing', async () => {
    const db = openSqliteStore(join(t.dataDir, 'fresh.db'), resolveMigrationsDir());
    try {
      await expect(
        loadDesiredState({ db, secrets: t.deps.secrets }, gatewaySettingsFor(t.config, t.deps.gateway)),
      ).rejects.toThrow(/not registered/);
      expect(await db.select().from(settings).all()).toEqual([]);
      expect(await db.select().from(gateways).all()).toEqual([]);
    } finally {
      sqliteClientOf(db).close();
    }
  });

  test('gives the gateway the first host of the subnet and a stable, encrypted key', async () => {
    const state = await load();
    expect(state.gateway).toMatchObject({ address: '10.50.0.1/16', listenPort: 51999, publicHost: 'gateway.test' });
    expect((await load()).gateway.privateKey).toBe(state.gateway.privateKey);
    const stored = await t.db.select().from(gateways).where(eq(gateways.id, t.deps.gateway.id)).get();
    expect(stored?.privateKeyEnc).not.toContain(state.gateway.privateKey);
    expect(t.deps.gateway.publicKey).toBe(publicKeyFromPrivate(state.gateway.privateKey));
    expect(stored?.publicKey).toBe(t.deps.gateway.publicKey);
  });

  test('has a peer for each enabled non-local node, gateways routing their network', async () => {
    const plain = await insertNode(t.deps, { address: '10.50.0.2' });
    const gateway = await insertNode(t.deps, {
      address: '10.50.0.3',
      isGateway: true,
      gatewayNetwork: '192.168.1.0/24',
    });
    await insertNode(t.deps, { address: '10.50.0.4', enabled: false });
    const psk = await insertNode(t.deps, {
      address: '10.50.0.5',
      presharedKeyEnc: t.deps.secrets.encrypt('psk-value'),
    });
    const peers = (await load()).peers;
    expect(peers.map((p) => p.nodeId)).toEqual([plain.id, gateway.id, psk.id]);
    expect(peers[0]).toEqual({
      nodeId: plain.id,
      publicKey: plain.publicKey,
      presharedKey: null,
      address: '10.50.0.2',
      allowedIps: ['10.50.0.2/32'],
      allowInternet: false,
    });
    expect(peers[1]?.allowedIps).toEqual(['10.50.0.3/32', '192.168.1.0/24']);
    expect(peers[2]?.presharedKey).toBe('psk-value');
  });

  test('marks full-tunnel nodes so the gateway forwards their internet traffic', async () => {
    await insertNode(t.deps, { address: '10.50.0.2', allowInternet: true });
    await insertNode(t.deps, { address: '10.50.0.3' });
    expect((await load()).peers.map((p) => p.allowInternet)).toEqual([true, false]);
  });

  test('serves enabled services of connected nodes, resolving the upstream host by node kind', async () => {
    const plain = await insertNode(t.deps, { address: '10.50.0.2' });
    const gateway = await insertNode(t.deps, {
      address: '10.50.0.3',
      isGateway: true,
      gatewayNetwork: '192.168.1.0/24',
    });
    const offline = await insertNode(t.deps, { address: '10.50.0.4', enabled: false });
    const local = await t.db.select().from(nodes).where(eq(nodes.isLocal, true)).get();
    if (!local) throw new Error('local node missing');
    await t.db.write(async (tx) => await tx.insert(domains).values({ domain: 'app.example.com' }).run());
    await t.db.write(
      async (tx) =>
        await tx
          .insert(httpServices)
          .values([
            { ...httpRow, nodeId: plain.id, domain: 'app.example.com', allowedIps: ['203.0.113.0/24'] },
            { ...httpRow, nodeId: gateway.id, pathLocation: '/lan', backendHost: '192.168.1.10' },
            { ...httpRow, nodeId: offline.id, pathLocation: '/offline' },
            { ...httpRow, nodeId: plain.id, pathLocation: '/disabled', enabled: false },
          ])
          .run(),
    );
    await t.db.write(
      async (tx) =>
        await tx
          .insert(tcpServices)
          .values([
            { ...tcpRow, nodeId: plain.id, port: 30000, ssl: true, domain: 'app.example.com' },
            { ...tcpRow, nodeId: offline.id, port: 30001 },
            { ...tcpRow, nodeId: gateway.id, proto: 'udp', port: 30000, backendHost: '192.168.1.53', backendPort: 53 },
          ])
          .run(),
    );

    const state = await load();
    expect(state.http.map((r) => [r.nodeId, r.pathLocation, r.domain, r.backendHost, r.backendPort])).toEqual([
      [plain.id, '/', 'app.example.com', '10.50.0.2', 80],
      [gateway.id, '/lan', null, '192.168.1.10', 80],
    ]);
    expect(state.http[0]).toMatchObject({
      nodeId: plain.id,
      backendProto: 'http',
      allowedIps: ['203.0.113.0/24'],
      blockedIps: [],
    });
    expect(state.stream.map((r) => [r.proto, r.port, r.ssl, r.domain, r.backendHost, r.backendPort])).toEqual([
      ['tcp', 30000, true, 'app.example.com', '10.50.0.2', 5432],
      ['udp', 30000, false, null, '192.168.1.53', 53],
    ]);
    expect(state.domains).toEqual([expect.objectContaining({ domain: 'app.example.com', ssl: 'self-signed' })]);
    // What the traffic counters read every minute: the same TCP/UDP services, without the HTTP ones.
    expect(await loadStreamState(t.deps)).toEqual(state.stream);
  });

  test('reads the routes in pages with the event loop free between them, and still sees one moment', async () => {
    const node = await insertNode(t.deps, { address: '10.50.0.2' });
    await t.db.write((tx) => tx.insert(domains).values({ domain: 'many.test', ssl: 'self-signed', ...http01 }));
    const count = STATE_PAGE_ROWS + 500;
    const rows = Array.from({ length: count }, (_, i) => ({
      ...httpRow,
      nodeId: node.id,
      name: `web${i}`,
      domain: 'many.test',
      pathLocation: `/p${i}`,
    }));
    await t.db.write(async (tx) => {
      for (let i = 0; i < count; i += 1000) await tx.insert(httpServices).values(rows.slice(i, i + 1000));
    });
    const firstId = Math.min(...(await load()).http.map((route) => route.serviceId));
    // A change landing while the read runs: the first service deleted, one added (after every page's ids).
    let hasLanded = false;
    setImmediate(() => {
      void t.db
        .write(async (tx) => {
          await tx.delete(httpServices).where(eq(httpServices.id, firstId));
          await tx.insert(httpServices).values({ ...rows[0]!, name: 'late', pathLocation: '/late' });
        })
        .then(() => {
          hasLanded = true;
        });
    });
    const state = await load();
    const hasLate = state.http.some((route) => route.pathLocation === '/late');
    const hasFirst = state.http.some((route) => route.serviceId === firstId);
    // One moment: both halves of the change, or neither.
    expect(state.http).toHaveLength(count);
    expect(hasLate).toBe(!hasFirst);
    // The embedded engine read its first page, gave the loop back (the change landed) and kept its moment.
    if (t.db.engine === 'sqlite') expect({ hasLanded, hasLate }).toEqual({ hasLanded: true, hasLate: false });
    await vi.waitFor(() => expect(hasLanded).toBe(true));
    const after = await load();
    expect(after.http).toHaveLength(count);
    expect(after.http.some((route) => route.pathLocation === '/late')).toBe(true);
  });

  test('pins the whole state across node kinds, service kinds, IP lists and domains', async () => {
    const local = await t.db.select().from(nodes).where(eq(nodes.isLocal, true)).get();
    if (!local) throw new Error('local node missing');
    // The local node serves even when marked disabled: it is always "connected".
    await t.db.write(async (tx) => await tx.update(nodes).set({ enabled: false }).where(eq(nodes.id, local.id)).run());
    const plain = await insertNode(t.deps, { address: '10.50.0.2' });
    const gateway = await insertNode(t.deps, {
      address: '10.50.0.3',
      isGateway: true,
      gatewayNetwork: '192.168.1.0/24',
      allowInternet: true,
      presharedKeyEnc: t.deps.secrets.encrypt('psk-value'),
    });
    const offline = await insertNode(t.deps, { address: '10.50.0.4', enabled: false });
    const shop = await t.db.write(
      async (tx) => await tx.insert(domains).values({ domain: 'shop.example.com' }).returning().get(),
    );
    const api = await t.db.write(
      async (tx) => await tx.insert(domains).values({ domain: 'api.example.com', ssl: 'certbot' }).returning().get(),
    );
    const [web, lan, , , localApi] = await t.db.write(
      async (tx) =>
        await tx
          .insert(httpServices)
          .values([
            {
              ...httpRow,
              nodeId: plain.id,
              domain: 'shop.example.com',
              allowedIps: ['203.0.113.0/24', '198.51.100.7'],
              blockedIps: ['203.0.113.9'],
            },
            {
              ...httpRow,
              nodeId: gateway.id,
              pathLocation: '/lan',
              backendProto: 'https',
              backendHost: '192.168.1.10',
              backendPort: 8443,
            },
            { ...httpRow, nodeId: offline.id, pathLocation: '/offline' },
            { ...httpRow, nodeId: plain.id, pathLocation: '/disabled', enabled: false },
            {
              ...httpRow,
              nodeId: local.id,
              domain: 'api.example.com',
              backendHost: '127.0.0.1',
              backendPort: 9000,
              blockedIps: ['192.0.2.0/24'],
            },
          ])
          .returning()
          .all(),
    );
    const [tls, , dns, localTcp] = await t.db.write(
      async (tx) =>
        await tx
          .insert(tcpServices)
          .values([
            {
              ...tcpRow,
              nodeId: plain.id,
              port: 30000,
              ssl: true,
              domain: 'shop.example.com',
              allowedIps: ['203.0.113.0/24'],
            },
            { ...tcpRow, nodeId: offline.id, port: 30001 },
            {
              ...tcpRow,
              nodeId: gateway.id,
              proto: 'udp',
              port: 30000,
              backendHost: '192.168.1.53',
              backendPort: 53,
              blockedIps: ['198.51.100.0/24'],
            },
            { ...tcpRow, nodeId: local.id, port: 30002, backendHost: '127.0.0.1', backendPort: 6379 },
            { ...tcpRow, nodeId: plain.id, port: 30003, enabled: false },
          ])
          .returning()
          .all(),
    );
    if (!web || !lan || !localApi || !tls || !dns || !localTcp) throw new Error('services missing');

    expect(await load()).toStrictEqual({
      gateway: {
        address: '10.50.0.1/16',
        listenPort: 51999,
        privateKey: await readGatewayPrivateKey(t.deps, t.deps.gateway.id),
        publicHost: 'gateway.test',
      },
      peers: [
        {
          nodeId: plain.id,
          publicKey: plain.publicKey,
          presharedKey: null,
          address: '10.50.0.2',
          allowedIps: ['10.50.0.2/32'],
          allowInternet: false,
        },
        {
          nodeId: gateway.id,
          publicKey: gateway.publicKey,
          presharedKey: 'psk-value',
          address: '10.50.0.3',
          allowedIps: ['10.50.0.3/32', '192.168.1.0/24'],
          allowInternet: true,
        },
      ],
      http: [
        {
          serviceId: web.id,
          nodeId: plain.id,
          domain: 'shop.example.com',
          pathLocation: '/',
          backendProto: 'http',
          backendHost: '10.50.0.2',
          backendPort: 80,
          allowedIps: ['203.0.113.0/24', '198.51.100.7'],
          blockedIps: ['203.0.113.9'],
        },
        {
          serviceId: lan.id,
          nodeId: gateway.id,
          domain: null,
          pathLocation: '/lan',
          backendProto: 'https',
          backendHost: '192.168.1.10',
          backendPort: 8443,
          allowedIps: [],
          blockedIps: [],
        },
        {
          serviceId: localApi.id,
          nodeId: local.id,
          domain: 'api.example.com',
          pathLocation: '/',
          backendProto: 'http',
          backendHost: '127.0.0.1',
          backendPort: 9000,
          allowedIps: [],
          blockedIps: ['192.0.2.0/24'],
        },
      ],
      stream: [
        {
          serviceId: tls.id,
          nodeId: plain.id,
          proto: 'tcp',
          port: 30000,
          ssl: true,
          domain: 'shop.example.com',
          backendHost: '10.50.0.2',
          backendPort: 5432,
          allowedIps: ['203.0.113.0/24'],
          blockedIps: [],
        },
        {
          serviceId: dns.id,
          nodeId: gateway.id,
          proto: 'udp',
          port: 30000,
          ssl: false,
          domain: null,
          backendHost: '192.168.1.53',
          backendPort: 53,
          allowedIps: [],
          blockedIps: ['198.51.100.0/24'],
        },
        {
          serviceId: localTcp.id,
          nodeId: local.id,
          proto: 'tcp',
          port: 30002,
          ssl: false,
          domain: null,
          backendHost: '127.0.0.1',
          backendPort: 6379,
          allowedIps: [],
          blockedIps: [],
        },
      ],
      domains: [
        { domainId: shop.id, domain: 'shop.example.com', ssl: 'self-signed', pemFingerprint: null, ...http01 },
        { domainId: api.id, domain: 'api.example.com', ssl: 'certbot', pemFingerprint: null, ...http01 },
      ],
      challenges: new Map(),
      // docs/ACCESS.md "The session cookie": the cookie key every gateway derives from the secret key; nothing
      // protected here.
      access: {
        key: { id: '1', secret: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) },
        policies: [],
        revoked: new Map(),
      },
    });
  });
});

describe('loadScopedState', () => {
  test("reads a scope's hosts whole, with the wildcard above and the exact names below, as the full read has them", async () => {
    const node = await insertNode(t.deps, { address: '10.50.0.2' });
    const names = ['*.w.example.com', 'own.w.example.com', 'x.example.com', 'y.example.com', 'deep.own.w.example.com'];
    const rows = await t.db.write(
      async (tx) =>
        await tx
          .insert(domains)
          .values(names.map((domain) => ({ domain })))
          .returning()
          .all(),
    );
    const x = rows.find((row) => row.domain === 'x.example.com');
    await t.db.write(async (tx) => {
      await tx
        .insert(httpServices)
        .values([
          ...names.map((domain) => ({ ...httpRow, nodeId: node.id, domain })),
          { ...httpRow, nodeId: node.id, domain: 'x.example.com', pathLocation: '/off', enabled: false },
          { ...httpRow, nodeId: node.id, domain: '', pathLocation: '/none' },
        ])
        .run();
      await tx
        .insert(accessPolicies)
        .values({ domainId: x?.id ?? 0, mode: 'protected' })
        .run();
    });
    const full = await load();
    const expectScope = async (hosts: string[], whole: string[]) => {
      const scoped = await loadScopedState(t.deps, { hosts, http: [] });
      expect([...scoped.hosts].sort()).toEqual([...whole].sort());
      const within = (domain: string | null) => whole.includes(domain ?? '');
      expect(scoped.http).toEqual(full.http.filter((route) => within(route.domain)));
      expect(scoped.domains).toEqual(full.domains.filter((d) => within(d.domain)));
      expect(scoped.access).toEqual(full.access);
    };
    await expectScope(['x.example.com'], ['x.example.com', '*.example.com']);
    expect((await loadScopedState(t.deps, { hosts: ['x.example.com'], http: [] })).http[0]?.accessPolicyId).toEqual(
      expect.any(Number),
    );
    await expectScope(['*.w.example.com'], ['*.w.example.com', 'own.w.example.com']);
    await expectScope(['own.w.example.com', ''], ['own.w.example.com', '*.w.example.com', '']);
    await expectScope(['new.example.com'], ['new.example.com', '*.example.com']);
  });

  test("reads a scope's TCP/UDP instances as the full read has their services, and the domains their TLS serves", async () => {
    const node = await insertNode(t.deps, { address: '10.50.0.2' });
    const off = await insertNode(t.deps, { address: '10.50.0.3', enabled: false });
    await t.db.write(async (tx) => {
      await tx
        .insert(domains)
        .values([{ domain: 'tls.example.com' }, { domain: 'other.example.com' }])
        .run();
      await tx
        .insert(tcpServices)
        .values([
          { ...tcpRow, nodeId: node.id, port: 30001 },
          { ...tcpRow, nodeId: node.id, port: 30002, ssl: true, domain: 'tls.example.com' },
          { ...tcpRow, nodeId: node.id, port: 30001, proto: 'udp' },
          { ...tcpRow, nodeId: node.id, port: 30003, enabled: false },
          { ...tcpRow, nodeId: off.id, port: 30004 },
          { ...tcpRow, nodeId: node.id, port: 30005, domain: 'other.example.com' },
        ])
        .run();
    });
    const full = await load();
    const keys = ['tcp-30001', 'tcp-30002', 'tcp-30003', 'tcp-30004', 'tcp-30009', 'tcp-99999', 'x'];
    const scoped = await loadScopedState(t.deps, { hosts: [], http: [], streams: keys, tcp: [] });
    expect(scoped.streams).toEqual(['tcp-30001', 'tcp-30002', 'tcp-30003', 'tcp-30004', 'tcp-30009']);
    // udp-30001, a disabled service, a disabled node's and one outside the scope are not read.
    expect(scoped.stream).toEqual(full.stream.filter((route) => route.proto === 'tcp' && route.port <= 30002));
    expect(scoped.stream?.map((route) => route.backendHost)).toEqual(['10.50.0.2', '10.50.0.2']);
    expect(scoped.streamDomains).toEqual(full.domains.filter((d) => d.domain === 'tls.example.com'));
    // Nothing of HTTP is read for a TCP/UDP change alone.
    expect(scoped).toMatchObject({ hosts: [], http: [], domains: [] });
    expect(scoped.access).toBeUndefined();
  });

  test("reads a scope's nodes' peers as the full read has them: a disabled or local node has none", async () => {
    const gateway = await insertNode(t.deps, {
      address: '10.50.0.5',
      isGateway: true,
      gatewayNetwork: '192.168.5.0/24',
      extraGatewayNetworks: ['192.168.6.0/24'],
      allowInternet: true,
    });
    const plain = await insertNode(t.deps, { address: '10.50.0.6' });
    const off = await insertNode(t.deps, { address: '10.50.0.7', enabled: false });
    const local = await t.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.isLocal, true)).get();
    const ids = [gateway.id, plain.id, off.id, local?.id ?? 0];
    const scoped = await loadScopedState(t.deps, { hosts: [], http: [], nodes: ids });
    expect(scoped.nodes).toEqual(ids);
    expect(scoped.peers).toEqual((await load()).peers.filter((peer) => ids.includes(peer.nodeId)));
    expect(scoped.peers?.map((peer) => peer.nodeId)).toEqual([gateway.id, plain.id]);
    // Without nodes in the scope: no peers read.
    expect((await loadScopedState(t.deps, { hosts: [], http: [] })).peers).toBeUndefined();
  });

  /** Each name as a domain with one HTTP service of `nodeId`, 100 rows per write. */
  async function insertDomainsWithServices(nodeId: number, names: readonly string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 100) {
      const part = names.slice(i, i + 100);
      await t.db.write(async (tx) => {
        await tx
          .insert(domains)
          .values(part.map((domain) => ({ domain })))
          .run();
        await tx
          .insert(httpServices)
          .values(part.map((domain) => ({ ...httpRow, nodeId, domain })))
          .run();
      });
    }
  }

  test("reads a burst's scope larger than a query's bound whole, in bounded queries", async () => {
    const node = await insertNode(t.deps, { address: '10.50.0.2' });
    const names = Array.from({ length: 2 * SCOPE_VALUES_PER_QUERY + 200 }, (_, i) => `h${i}.example.com`);
    const ports = Array.from({ length: SCOPE_VALUES_PER_QUERY / 2 + 50 }, (_, i) => 31000 + i);
    await insertDomainsWithServices(node.id, names);
    await t.db.write(async (tx) => {
      await tx
        .insert(tcpServices)
        .values(ports.map((port) => ({ ...tcpRow, nodeId: node.id, port })))
        .run();
    });
    const full = await load();
    // A key with no service and one twice: read as the others, its service once.
    const keys = [...ports.map((port) => `tcp-${port}`), 'tcp-32000', 'tcp-31000'];
    const scope = { hosts: names, http: [], streams: keys, tcp: [] };
    const variables = countStatements();
    const scoped = await loadScopedState(t.deps, scope);
    vi.restoreAllMocks();
    const hosts = new Set([...names, '*.example.com']);
    expect(scoped.http).toEqual(full.http.filter((route) => hosts.has(route.domain ?? '')));
    expect(scoped.http).toHaveLength(names.length);
    expect(scoped.domains).toEqual(full.domains.filter((d) => hosts.has(d.domain)));
    expect(scoped.stream).toEqual(full.stream);
    expect(scoped.stream).toHaveLength(ports.length);
    if (t.db.engine === 'sqlite') {
      expect(Math.max(...variables)).toBeLessThanOrEqual(SCOPE_VALUES_PER_QUERY + 10);
      // 1,201 hosts and names (the wildcard above): 3 parts each; 302 keys (two variables each): 2 parts.
      expect(variables.filter((count) => count > 100)).toHaveLength(8);
      expect(variables.length).toBeLessThanOrEqual(20);
    }
  });

  test("reads a burst's wildcards together: the exact names below each, in one query per part", async () => {
    const node = await insertNode(t.deps, { address: '10.50.0.2' });
    const count = SCOPE_VALUES_PER_QUERY + 100;
    const wildcards = Array.from({ length: count }, (_, i) => `*.w${i}.example.com`);
    // One name below each wildcard, one two labels below (not decided by it) and one under no wildcard of the scope.
    const below = wildcards.map((wildcard) => `own${wildcard.slice(1)}`);
    const others = ['deep.own.w0.example.com', 'own.other.example.com'];
    const names = [...wildcards, ...below, ...others];
    await insertDomainsWithServices(node.id, names);
    const variables = countStatements();
    const scoped = await loadScopedState(t.deps, { hosts: wildcards, http: [] });
    vi.restoreAllMocks();
    expect([...scoped.hosts].sort()).toEqual([...wildcards, ...below].sort());
    expect(scoped.http).toHaveLength(2 * count);
    if (t.db.engine === 'sqlite') {
      // 600 wildcards: 2 suffix queries; their 1,200 hosts and names: 3 parts each; the run's fixed reads.
      expect(variables.length).toBeLessThanOrEqual(14);
    }
  });

  test("says whether a node's token set subnets, as the full read marks its peer", async () => {
    const scoped = () => loadScopedState(t.deps, { hosts: ['x.example.com'], http: [] });
    await insertNode(t.deps, { address: '10.50.0.2', isGateway: true, gatewayNetwork: '192.168.1.0/24' });
    expect((await scoped()).tokenNetworks).toBe(false);
    await insertNode(t.deps, { address: '10.50.0.3', enabled: false, isGateway: true, networksSetBy: 'node' });
    expect((await scoped()).tokenNetworks).toBe(false);
    await insertNode(t.deps, {
      address: '10.50.0.4',
      isGateway: true,
      gatewayNetwork: '192.168.2.0/24',
      networksSetBy: 'node',
    });
    expect((await scoped()).tokenNetworks).toBe(true);
    expect((await load()).peers.some((peer) => peer.networksByToken === true)).toBe(true);
  });
});
