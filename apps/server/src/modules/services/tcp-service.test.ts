import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ListResponse, TcpService } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { createApiClient, fieldMessage, insertNode } from './test-support.js';

// API tests for TCP/UDP services: public ports from POSTERN_TCP_PORT_RANGE, unique per protocol.

let t: TestApp;
let api: ReturnType<typeof createApiClient>;

async function start(env: Record<string, string> = {}): Promise<void> {
  t = await buildTestApp({ env: { POSTERN_TCP_PORT_RANGE: '30000-30100', ...env } });
  api = createApiClient(t, await t.login());
}
beforeEach(async () => {
  await start();
});
afterEach(async () => {
  await t.cleanup();
});

const mqtt = { name: 'mqtt', backendPort: 1883 };

describe('creating a TCP/UDP service', () => {
  test('assigns the lowest free port per protocol and publishes tcp:// and udp:// addresses', async () => {
    const node = await insertNode(t.deps);
    const first = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, mqtt);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      proto: 'tcp',
      port: 30000,
      ssl: false,
      backendHost: node.address,
      publicAccess: 'tcp://gateway.test:30000',
    });
    const second = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, mqtt);
    expect(second.body.port).toBe(30001);
    // UDP listens separately, so the same number is free for it.
    const udp = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, { ...mqtt, proto: 'udp' });
    expect(udp.body).toMatchObject({ proto: 'udp', port: 30000, publicAccess: 'udp://gateway.test:30000' });
    expect(t.fakeDataPlane.lastState?.stream.map((r) => [r.proto, r.port])).toEqual([
      ['tcp', 30000],
      ['tcp', 30001],
      ['udp', 30000],
    ]);
  });

  test('fills the gap a deleted service left', async () => {
    const node = await insertNode(t.deps);
    const a = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, mqtt);
    await api('POST', `/api/services/${node.id}/tcp`, mqtt);
    expect((await api('DELETE', `/api/services/${node.id}/tcp/${a.body.id}`)).status).toBe(204);
    expect((await api<TcpService>('POST', `/api/services/${node.id}/tcp`, mqtt)).body.port).toBe(30000);
  });

  test('uses the domain in the public address when one is given', async () => {
    const node = await insertNode(t.deps);
    const { body } = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, {
      ...mqtt,
      domain: 'mq.example.com',
      port: 30050,
    });
    expect(body.publicAccess).toBe('tcp://mq.example.com:30050');
  });

  test('keeps an explicit port inside the range', async () => {
    const node = await insertNode(t.deps);
    const low = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, port: 80 });
    expect(low.status).toBe(422);
    expect(fieldMessage(low.body, 'port')).toBe('This field must be greater than or equal to 30000');
    const high = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, port: 30101 });
    expect(fieldMessage(high.body, 'port')).toBe('This field must be less than or equal to 30100');
  });

  test('refuses a port already used by the same protocol', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, port: 30010 });
    const clash = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, name: 'again', port: 30010 });
    expect(clash.status).toBe(422);
    expect(fieldMessage(clash.body, 'port')).toBe('Port 30010/tcp is already used by the service "mqtt"');
  });

  test('answers 422 on port when the range is exhausted', async () => {
    await t.cleanup();
    await start({ POSTERN_TCP_PORT_RANGE: '30000-30001' });
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/tcp`, mqtt);
    await api('POST', `/api/services/${node.id}/tcp`, mqtt);
    const full = await api('POST', `/api/services/${node.id}/tcp`, mqtt);
    expect(full.status).toBe(422);
    expect(fieldMessage(full.body, 'port')).toContain('No free TCP port is left in 30000-30001');
  });

  test("never hands out the gateway's own WireGuard port for UDP", async () => {
    await t.cleanup();
    await start({ POSTERN_TCP_PORT_RANGE: '51820-51821', POSTERN_WG_PORT: '51820' });
    const node = await insertNode(t.deps);
    const udp = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, { ...mqtt, proto: 'udp' });
    expect(udp.body.port).toBe(51821);
    const explicit = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, proto: 'udp', port: 51820 });
    expect(fieldMessage(explicit.body, 'port')).toBe("Port 51820/udp is the gateway's WireGuard port");
    const tcp = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, { ...mqtt, port: 51820 });
    expect(tcp.body.port).toBe(51820);
  });

  test('answers 422 with the spec messages', async () => {
    const node = await insertNode(t.deps);
    const missing = await api('POST', `/api/services/${node.id}/tcp`, { name: 'x' });
    expect(fieldMessage(missing.body, 'backendPort')).toBe('This field is required');
    const notNumber = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, port: 'abc' });
    expect(fieldMessage(notNumber.body, 'port')).toBe('This field must be a number');
    const proto = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, proto: 'sctp' });
    expect(fieldMessage(proto.body, 'proto')).toBe('This field must be one of tcp, udp');
    const tlsOverUdp = await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, proto: 'udp', ssl: true });
    expect(fieldMessage(tlsOverUdp.body, 'ssl')).toBe('This field must be one of false');
  });
});

describe('listing and editing TCP services', () => {
  test('pages a node’s TCP services and filters all by domain', async () => {
    const node = await insertNode(t.deps);
    for (let i = 0; i < 6; i++)
      await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, domain: i < 2 ? 'mq.example.com' : null });
    const page = await api<ListResponse<TcpService>>('GET', `/api/services/${node.id}/tcp?limit=5`);
    expect(page.body).toMatchObject({ page: 1, limit: 5, total: 6 });
    expect(page.body.data).toHaveLength(5);
    const onDomain = await api<ListResponse<TcpService>>('GET', '/api/services/tcp?domain=mq.example.com');
    expect(onDomain.body.total).toBe(2);
  });

  test('moves to a free port, re-assigns on null and keeps ports unique on a protocol change', async () => {
    const node = await insertNode(t.deps);
    const a = await api<TcpService>('POST', `/api/services/${node.id}/tcp`, mqtt);
    await api('POST', `/api/services/${node.id}/tcp`, { ...mqtt, name: 'dns', proto: 'udp', port: 30005 });
    const moved = await api<TcpService>('PATCH', `/api/services/${node.id}/tcp/${a.body.id}`, { port: 30005 });
    expect(moved.body).toMatchObject({ port: 30005, publicAccess: 'tcp://gateway.test:30005' });
    const clash = await api('PATCH', `/api/services/${node.id}/tcp/${a.body.id}`, { proto: 'udp' });
    expect(fieldMessage(clash.body, 'port')).toBe('Port 30005/udp is already used by the service "dns"');
    const reassigned = await api<TcpService>('PATCH', `/api/services/${node.id}/tcp/${a.body.id}`, {
      port: null,
      name: 'renamed',
    });
    expect(reassigned.body).toMatchObject({ port: 30000, name: 'renamed' });
  });
});

describe('searching TCP/UDP services', () => {
  test('q matches the name or the public port', async () => {
    const node = await insertNode(t.deps);
    await api('POST', `/api/services/${node.id}/tcp`, mqtt);
    await api('POST', `/api/services/${node.id}/tcp`, { name: 'Postgres', backendPort: 5432 });
    const names = async (url: string) => (await api<ListResponse<TcpService>>('GET', url)).body.data.map((s) => s.name);
    expect(await names(`/api/services/${node.id}/tcp?q=postgres`)).toEqual(['Postgres']);
    expect(await names('/api/services/tcp?q=30000')).toEqual(['mqtt']);
    expect(await names('/api/services/tcp')).toEqual(['mqtt', 'Postgres']);
  });
});
