import { eq } from 'drizzle-orm';
import type { AgentConfig, Node } from '@postern/contract';
import { afterEach, describe, expect, test } from 'vitest';
import { LEGACY_GATEWAY_KEY_SETTING } from '../../db/gateway-key.js';
import { gateways, nodes, settings } from '../../db/schema.js';
import { generateKeyPair, publicKeyFromPrivate } from '../../dataplane/wireguard/keys.js';
import { buildTestApp, TEST_STORE, type TestApp, type TestAppOptions } from '../../test/build-test-app.js';
import { postgresAvailable } from '../../test/postgres.js';

// Several gateways on one PostgreSQL database (docs/SCALE-OUT.md): each has its own WireGuard key and tunnel address,
// and a node's config has one [Peer] per live gateway, the same whichever gateway answers.

const apps: TestApp[] = [];
afterEach(async () => {
  // The first app made the database: it goes last.
  for (const app of apps.reverse()) await app.cleanup();
  apps.length = 0;
});

async function gateway(options: TestAppOptions & { endpoint: string; subnet?: string }): Promise<TestApp> {
  const { endpoint, subnet, ...rest } = options;
  const app = await buildTestApp({
    ...rest,
    env: { POSTERN_WG_ENDPOINT: endpoint, ...(subnet ? { POSTERN_VPN_SUBNET: subnet } : {}), ...rest.env },
  });
  apps.push(app);
  return app;
}

const tokens = new WeakMap<TestApp, string>();

type Refusal = { errors: { body: { field: string; message: string }[] } };

/** An admin call; `body` is the JSON answer (null for a file). */
async function adminCall(
  app: TestApp,
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
): Promise<{ status: number; body: unknown; text: string }> {
  const token = tokens.get(app) ?? (await app.login());
  tokens.set(app, token);
  const headers = { authorization: `Bearer ${token}` };
  const response = await app.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const isJson = String(response.headers['content-type']).startsWith('application/json');
  return { status: response.statusCode, body: isJson ? response.json() : null, text: response.body };
}

async function createNode(app: TestApp, payload: object): Promise<Node & { token: string }> {
  const created = await adminCall(app, 'POST', '/api/nodes', payload);
  expect(created.status, created.text).toBe(201);
  return created.body as Node & { token: string };
}

async function agentConfig(app: TestApp, token: string): Promise<AgentConfig> {
  const response = await app.app.inject({ url: '/api/agent/config', headers: { authorization: `Bearer ${token}` } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<AgentConfig>();
}

async function setLastSeen(app: TestApp, gatewayId: number, at: Date): Promise<void> {
  await app.db.write(
    async (tx) =>
      await tx.update(gateways).set({ lastSeenAt: at.toISOString() }).where(eq(gateways.id, gatewayId)).run(),
  );
}

// Once per test command: the run on PostgreSQL (POSTERN_TEST_STORE=postgres) would only repeat it.
// Several apps (argon2 sign-ins, PostgreSQL databases) per test: more than the default 5 s on 2 loaded cores.
describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))(
  'several gateways on one database',
  { timeout: 30_000 },
  () => {
    test('each gateway has its own key and tunnel address; a node config lists both, identical from either', async () => {
      const a = await gateway({ postgres: true, endpoint: 'gw-a.example.test:51820' });
      const b = await gateway({ sameDatabaseAs: a, endpoint: 'gw-b.example.test:51821' });
      expect(a.deps.gateway.address).toBe('10.44.0.1');
      // From the top of the subnet: node numbering from the bottom is undisturbed.
      expect(b.deps.gateway.address).toBe('10.44.255.254');
      expect(b.deps.gateway.publicKey).not.toBe(a.deps.gateway.publicKey);
      expect(b.deps.gateway.name).not.toBe(a.deps.gateway.name);

      // Each data plane runs with its own key and address.
      await a.fakeDataPlane.apply();
      await b.fakeDataPlane.apply();
      const stateA = a.fakeDataPlane.lastState?.gateway;
      const stateB = b.fakeDataPlane.lastState?.gateway;
      expect(stateA?.address).toBe('10.44.0.1/16');
      expect(stateB?.address).toBe('10.44.255.254/16');
      expect(publicKeyFromPrivate(stateA?.privateKey ?? '')).toBe(a.deps.gateway.publicKey);
      expect(publicKeyFromPrivate(stateB?.privateKey ?? '')).toBe(b.deps.gateway.publicKey);

      const node = await createNode(a, { name: 'office' });
      expect(node.address).toBe('10.44.0.2');
      const fromA = await agentConfig(a, node.token);
      const fromB = await agentConfig(b, node.token);
      expect(fromB).toEqual(fromA);
      expect(fromA.gateways).toEqual([
        {
          name: a.deps.gateway.name,
          publicKey: a.deps.gateway.publicKey,
          endpoint: 'gw-a.example.test:51820',
          address: '10.44.0.1',
          tunnelHealthUrl: 'http://10.44.0.1:80/_postern/tunnel-health',
        },
        {
          name: b.deps.gateway.name,
          publicKey: b.deps.gateway.publicKey,
          endpoint: 'gw-b.example.test:51821',
          address: '10.44.255.254',
          tunnelHealthUrl: 'http://10.44.255.254:80/_postern/tunnel-health',
        },
      ]);
      expect(fromA.tunnelHealthUrl).toBe('http://10.44.0.1:80/_postern/tunnel-health');
      const peers = fromA.config.split('\n\n').slice(1);
      expect(peers).toHaveLength(2);
      expect(peers[0]).toContain(`PublicKey = ${a.deps.gateway.publicKey}\n`);
      expect(peers[0]).toContain('Endpoint = gw-a.example.test:51820\nAllowedIPs = 10.44.0.1/32, 10.44.0.0/16\n');
      expect(peers[1]).toContain(`PublicKey = ${b.deps.gateway.publicKey}\n`);
      expect(peers[1]).toContain('Endpoint = gw-b.example.test:51821\nAllowedIPs = 10.44.255.254/32\n');

      // The console's download is the same file.
      const download = await adminCall(b, 'GET', `/api/nodes/${node.id}/download`);
      expect(download.text).toBe(fromA.config);
    });

    test('a gateway whose heartbeat stopped leaves the node config; the answering gateway is always in it', async () => {
      const a = await gateway({ postgres: true, endpoint: 'gw-a.example.test:51820' });
      const b = await gateway({ sameDatabaseAs: a, endpoint: 'gw-b.example.test:51821' });
      const node = await createNode(a, { name: 'office', allowInternet: true });
      const names = async (app: TestApp) => (await agentConfig(app, node.token)).gateways?.map((g) => g.name);
      const now = Date.now();
      await setLastSeen(a, b.deps.gateway.id, new Date(now - 61_000));
      await setLastSeen(a, a.deps.gateway.id, new Date(now));
      expect(await names(a)).toEqual([a.deps.gateway.name]);
      // A single peer: the file exactly as before several gateways existed (no /32 of its own).
      expect((await agentConfig(a, node.token)).config).toContain(
        'Endpoint = gw-a.example.test:51820\nAllowedIPs = 0.0.0.0/0\n',
      );
      expect(await names(b)).toEqual([a.deps.gateway.name, b.deps.gateway.name]);

      // Relative to the newest heartbeat: a database outage that stopped every heartbeat empties nothing.
      await setLastSeen(a, a.deps.gateway.id, new Date(now - 3_600_000));
      await setLastSeen(a, b.deps.gateway.id, new Date(now - 3_600_000 - 30_000));
      expect(await names(a)).toEqual([a.deps.gateway.name, b.deps.gateway.name]);
      const config = (await agentConfig(b, node.token)).config;
      // Full tunnel: the default route on the first peer only.
      expect(config).toContain('Endpoint = gw-a.example.test:51820\nAllowedIPs = 10.44.0.1/32, 0.0.0.0/0\n');
      expect(config).toContain('Endpoint = gw-b.example.test:51821\nAllowedIPs = 10.44.255.254/32\n');
    });

    test('node and gateway addresses never collide, whichever is allocated first', async () => {
      const subnet = '10.9.0.0/29'; // hosts .1-.6
      const a = await gateway({ postgres: true, endpoint: 'gw-a.example.test:51820', subnet });
      const top = await createNode(a, { name: 'top', address: '10.9.0.6' });
      expect(top.address).toBe('10.9.0.6');
      const b = await gateway({ sameDatabaseAs: a, endpoint: 'gw-b.example.test:51821', subnet });
      expect(b.deps.gateway.address).toBe('10.9.0.5');
      const taken = await adminCall(b, 'POST', '/api/nodes', {
        name: 'clash',
        address: '10.9.0.5',
      });
      expect(taken.status).toBe(422);
      expect((taken.body as Refusal).errors.body).toEqual([
        { field: 'address', message: 'This address is already in use', code: 'address_in_use' },
      ]);
      expect((await createNode(b, { name: 'n2' })).address).toBe('10.9.0.2');
      expect((await createNode(a, { name: 'n3' })).address).toBe('10.9.0.3');
      const c = await gateway({ sameDatabaseAs: a, endpoint: 'gw-c.example.test:51822', subnet });
      expect(c.deps.gateway.address).toBe('10.9.0.4');
      // The subnet is full now: the next node is refused, nothing is double-booked.
      const full = await adminCall(c, 'POST', '/api/nodes', {
        name: 'n4',
      });
      expect(full.status).toBe(422);
      expect((full.body as Refusal).errors.body[0]?.message).toMatch(/full/);
      const rows = await a.db.select({ address: gateways.address }).from(gateways).all();
      expect(rows.map((r) => r.address).sort()).toEqual(['10.9.0.1', '10.9.0.4', '10.9.0.5']);
    });

    test('upgrade: the first gateway on a database from before several gateways adopts its key and address', async () => {
      const old = await gateway({ postgres: true, endpoint: 'gw.example.test:51820' });
      const node = await createNode(old, { name: 'office' });
      // What an older version left behind: the one key as a setting, no gateways rows.
      const legacy = generateKeyPair();
      await old.db.write(async (tx) => {
        await tx.delete(gateways).run();
        await tx
          .insert(settings)
          .values({ key: LEGACY_GATEWAY_KEY_SETTING, value: old.deps.secrets.encrypt(legacy.privateKey) })
          .run();
      });
      const upgraded = await gateway({ sameDatabaseAs: old, endpoint: 'gw.example.test:51820' });
      expect(upgraded.deps.gateway).toMatchObject({ publicKey: legacy.publicKey, address: '10.44.0.1' });
      await upgraded.fakeDataPlane.apply();
      expect(upgraded.fakeDataPlane.lastState?.gateway.privateKey).toBe(legacy.privateKey);
      // The node's config is what it was: one peer, the old key, the old routes.
      const config = (await agentConfig(upgraded, node.token)).config;
      expect(config.split('\n\n')[1]).toMatch(
        new RegExp(
          `^\\[Peer\\]\\nPublicKey = ${legacy.publicKey.replace(/[+/]/g, '\\$&')}\\nPresharedKey = \\S+\\n` +
            'Endpoint = gw\\.example\\.test:51820\\nAllowedIPs = 10\\.44\\.0\\.0/16\\nPersistentKeepalive = 25\\n$',
        ),
      );
      // The next gateway does not get the legacy key: a fresh one, from the top.
      const second = await gateway({ sameDatabaseAs: old, endpoint: 'gw2.example.test:51820' });
      expect(second.deps.gateway.publicKey).not.toBe(legacy.publicKey);
      expect(second.deps.gateway.address).toBe('10.44.255.254');
    });

    test('a restarted gateway (same name) keeps its key and address and takes the new endpoint', async () => {
      const a = await gateway({ postgres: true, endpoint: 'gw-a.example.test:51820' });
      const b = await gateway({ sameDatabaseAs: a, endpoint: 'gw-b.example.test:51821' });
      const again = await gateway({
        sameDatabaseAs: a,
        endpoint: 'gw-b2.example.test:51821',
        env: { POSTERN_GATEWAY_NAME: b.deps.gateway.name },
      });
      expect(again.deps.gateway).toEqual({ ...b.deps.gateway, endpoint: 'gw-b2.example.test:51821' });
      expect(await a.db.select().from(gateways).all()).toHaveLength(2);
    });

    test("a node's status is the best over the live gateways: newest handshake and its client address, summed transfer", async () => {
      const a = await gateway({ postgres: true, endpoint: 'gw-a.example.test:51820' });
      const b = await gateway({ sameDatabaseAs: a, endpoint: 'gw-b.example.test:51821' });
      const node = await createNode(a, { name: 'office' });
      const [row] = await a.db.select().from(nodes).where(eq(nodes.id, node.id)).all();
      const key = row?.publicKey ?? '';
      const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
      // A last heard of the node long ago (offline); B a moment ago, through another path.
      a.fakeDataPlane.status.setStatus(key, {
        status: 'offline',
        clientIp: '203.0.113.9',
        latestHandshakeTimestamp: ago(400),
        transferRx: 1000,
        transferTx: 2000,
      });
      const recent = ago(10);
      b.fakeDataPlane.status.setStatus(key, {
        status: 'online',
        clientIp: '198.51.100.7',
        latestHandshakeTimestamp: recent,
        transferRx: 100,
        transferTx: 200,
      });
      for (const app of [a, b, a]) await app.app.gatewayPeerStatus.sync();
      const combined = {
        status: 'online',
        clientIp: '198.51.100.7',
        latestHandshakeTimestamp: new Date(Math.floor(Date.parse(recent) / 1000) * 1000).toISOString(),
        transferRx: 1100,
        transferTx: 2200,
      };
      expect((await adminCall(a, 'GET', `/api/nodes/${node.id}`)).body).toMatchObject(combined);
      expect((await adminCall(b, 'GET', `/api/nodes/${node.id}`)).body).toMatchObject(combined);

      // B's heartbeat stopped: what it saw no longer counts on A.
      await setLastSeen(a, b.deps.gateway.id, new Date(Date.now() - 120_000));
      await a.app.gatewayPeerStatus.sync();
      expect((await adminCall(a, 'GET', `/api/nodes/${node.id}`)).body).toMatchObject({
        status: 'offline',
        clientIp: '203.0.113.9',
        transferRx: 1000,
      });
    });
  },
);
