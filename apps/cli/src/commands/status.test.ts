import { describe, expect, it } from 'vitest';
import { parseCommand } from '../args.js';
import { connectedSystem, harness } from '../cli-harness.js';
import { createFakeSystem, type FakeSystem } from '../fake-system.js';
import type { ProbeTarget } from '../health.js';
import {
  GATEWAYS,
  GATEWAY_PUBLIC_KEY,
  makeNode,
  makeToken,
  multiGatewayConfigText,
  nodeConfigText,
  startAgentServer,
} from '../fixtures.js';
import { parseTunnelConfig } from '../wg-config.js';
import { bringUpTunnel, moveWideRoutes } from '../tunnel.js';
import { runStatus, type TunnelStatus } from './status.js';

function statusCommand(argv: string[]) {
  const command = parseCommand(['status', ...argv]);
  if (command.kind !== 'status') throw new Error('not a status command');
  return command;
}

/** A node that ran `connect`: settings and config stored, interface up. */
function connectedNode(url: string): FakeSystem {
  const system = connectedSystem();
  system.files.set('/cfg/postern.json', {
    text: JSON.stringify({ url, token: makeToken(), interface: 'pstn-s1' }),
    mode: 0o600,
  });
  system.files.set('/cfg/wireguard.conf', { text: nodeConfigText(), mode: 0o600 });
  system.links.add('pstn-s1');
  return system;
}

const unusedProbe = () => Promise.reject(new Error('probe must not run'));

describe('postern status', () => {
  it('prints the tunnel and the gateway view of the node as JSON', async () => {
    const server = await startAgentServer(() => ({ status: 200, body: makeNode({ status: 'online' }) }));
    try {
      const h = harness(connectedNode(server.url), { configDir: '/cfg' });
      expect(await runStatus(h.context, statusCommand(['--json']), unusedProbe)).toBe(0);
      expect(JSON.parse(h.out())).toEqual({
        interface: 'pstn-s1',
        configured: true,
        up: true,
        gatewayUrl: server.url,
        address: '10.8.0.2/32',
        gatewayTunnelIp: '10.8.0.1',
        endpoint: '192.0.2.1:51820',
        latestHandshake: '2025-12-31T23:59:55.000Z',
        transferRx: 1536,
        transferTx: 2048,
        gateways: [
          {
            name: null,
            publicKey: GATEWAY_PUBLIC_KEY,
            address: '10.8.0.1',
            endpoint: '192.0.2.1:51820',
            latestHandshake: '2025-12-31T23:59:55.000Z',
            transferRx: 1536,
            transferTx: 2048,
            routes: true,
          },
        ],
        node: { name: 'pi-at-home', status: 'online', enabled: true },
        gatewayError: null,
      });
    } finally {
      await server.close();
    }
  });

  it('shows in the text output that the gateway refused the token', async () => {
    const server = await startAgentServer(() => ({ status: 401, body: { message: 'Token revoked' } }));
    try {
      const h = harness(connectedNode(server.url), { configDir: '/cfg' });
      expect(await runStatus(h.context, statusCommand([]), unusedProbe)).toBe(0);
      expect(h.out()).toBe(
        [
          'Interface: pstn-s1 (up)',
          `Gateway:   ${server.url}`,
          'Node:      unknown: The gateway refused the access token: Token revoked',
          'Address:   10.8.0.2/32',
          'Endpoint:  192.0.2.1:51820',
          'Handshake: 5 s ago',
          'Transfer:  1.50 KB received, 2.00 KB sent',
          '',
        ].join('\n'),
      );
    } finally {
      await server.close();
    }
  });

  it('--health probes the gateway at its tunnel address and exits by the answer, without asking the API', async () => {
    const probed: ProbeTarget[] = [];
    const h = harness(connectedNode('http://127.0.0.1:9'), { configDir: '/cfg' });
    const code = await runStatus(h.context, statusCommand(['--health']), async (target) => {
      probed.push(target);
      return true;
    });
    expect(code).toBe(0);
    expect(probed).toEqual([{ gatewayUrl: 'http://127.0.0.1:9', host: '10.8.0.1', localAddress: '10.8.0.2' }]);
    expect(h.out()).toContain('Health:    ok (the gateway answers through the tunnel)');

    const failing = harness(connectedNode('http://127.0.0.1:9'), { configDir: '/cfg' });
    expect(await runStatus(failing.context, statusCommand(['--health', '--json']), async () => false)).toBe(1);
    expect(JSON.parse(failing.out())).toMatchObject({ up: true, healthy: false, node: null, gatewayError: null });
  });

  it('--health probes the tunnel health URL the gateway gave at connect, not its API', async () => {
    const system = connectedNode('https://gw.example.com');
    const healthUrl = 'http://10.8.0.1:80/_postern/tunnel-health';
    system.files.set('/cfg/postern.json', {
      text: JSON.stringify({
        url: 'https://gw.example.com',
        token: makeToken(),
        interface: 'pstn-s1',
        tunnelHealthUrl: healthUrl,
      }),
      mode: 0o600,
    });
    const probed: ProbeTarget[] = [];
    const h = harness(system, { configDir: '/cfg' });
    expect(
      await runStatus(h.context, statusCommand(['--health']), async (target) => {
        probed.push(target);
        return true;
      }),
    ).toBe(0);
    expect(probed).toEqual([{ healthUrl, localAddress: '10.8.0.2' }]);
  });

  it('--health on a full tunnel probes the gateway URL host, which the tunnel routes too', async () => {
    const system = connectedNode('https://gw.example.com');
    system.files.set('/cfg/wireguard.conf', { text: nodeConfigText({ allowedIps: '0.0.0.0/0' }), mode: 0o600 });
    const probed: ProbeTarget[] = [];
    const h = harness(system, { configDir: '/cfg' });
    await runStatus(h.context, statusCommand(['--health']), async (target) => {
      probed.push(target);
      return true;
    });
    expect(probed).toEqual([
      { gatewayUrl: 'https://gw.example.com', host: 'gw.example.com', localAddress: '10.8.0.2' },
    ]);
  });
});

describe('postern status with several gateways', () => {
  const [a, b, c] = GATEWAYS.map((gateway) => gateway.publicKey) as [string, string, string];
  const now = Date.UTC(2026, 0, 1);

  /** Connected to three gateways; gw-a silent for 250 s, so the daemon moved the routes to gw-b. */
  async function severalGateways(options: { names?: boolean } = {}): Promise<FakeSystem> {
    const handshakes: Record<string, number> = { [a]: now / 1000 - 250, [b]: now / 1000 - 5, [c]: 0 };
    const system = createFakeSystem({ hasKernelWireguard: true, peerHandshake: (key) => handshakes[key] });
    system.files.set('/cfg/postern.json', {
      text: JSON.stringify({
        url: 'https://gw.example.com',
        token: makeToken(),
        interface: 'pstn-s1',
        tunnelHealthUrl: GATEWAYS[0]?.tunnelHealthUrl,
        ...(options.names === false ? {} : { gateways: GATEWAYS }),
      }),
      mode: 0o600,
    });
    const config = multiGatewayConfigText();
    system.files.set('/cfg/wireguard.conf', { text: config, mode: 0o600 });
    await bringUpTunnel(system, 'pstn-s1', parseTunnelConfig(config), '/cfg');
    await moveWideRoutes(system, 'pstn-s1', parseTunnelConfig(config), a, b);
    return system;
  }

  it('prints every gateway with its endpoint and handshake, and which one carries the routes', async () => {
    const h = harness(await severalGateways(), { configDir: '/cfg' });
    expect(await runStatus(h.context, statusCommand([]), unusedProbe)).toBe(0);
    expect(h.out()).toContain(
      [
        'Address:   10.8.0.2/32',
        'Gateways:  3, routes via gw-b',
        '           gw-a  gw-a.example.com:51820  handshake 250 s ago',
        '           gw-b  gw-b.example.com:51820  handshake 5 s ago    routes',
        '           gw-c  gw-c.example.com:51820  handshake never',
        'Transfer:  4.50 KB received, 6.00 KB sent',
        '',
      ].join('\n'),
    );
    expect(h.out()).not.toContain('Endpoint:');
  });

  it('names a gateway by its public key when the gateway list is not stored, and in JSON', async () => {
    const h = harness(await severalGateways({ names: false }), { configDir: '/cfg' });
    await runStatus(h.context, statusCommand(['--json']), unusedProbe);
    const status = JSON.parse(h.out()) as TunnelStatus;
    expect(
      status.gateways.map((gateway) => [gateway.name, gateway.publicKey, gateway.address, gateway.routes]),
    ).toEqual([
      [null, a, '10.8.0.1', false],
      [null, b, '10.8.0.254', true],
      [null, c, '10.8.0.253', false],
    ]);
    expect(status).toMatchObject({ endpoint: 'gw-b.example.com:51820', gatewayTunnelIp: '10.8.0.254' });
    expect(status.latestHandshake).toBe(new Date(now - 5000).toISOString());

    const text = harness(await severalGateways({ names: false }), { configDir: '/cfg' });
    await runStatus(text.context, statusCommand([]), unusedProbe);
    expect(text.out()).toContain(`Gateways:  3, routes via ${b}`);
  });

  it('--health probes every gateway at its own tunnel health URL; one answering is enough', async () => {
    const probed: ProbeTarget[] = [];
    const h = harness(await severalGateways(), { configDir: '/cfg' });
    const code = await runStatus(h.context, statusCommand(['--health']), async (target) => {
      probed.push(target);
      return 'healthUrl' in target && target.healthUrl !== GATEWAYS[0]?.tunnelHealthUrl;
    });
    expect(code).toBe(0);
    expect(probed).toEqual(
      GATEWAYS.map((gateway) => ({ healthUrl: gateway.tunnelHealthUrl, localAddress: '10.8.0.2' })),
    );
    expect(h.out()).toContain('gw-a  gw-a.example.com:51820  handshake 250 s ago          health failing');
    expect(h.out()).toContain('gw-b  gw-b.example.com:51820  handshake 5 s ago    routes  health ok');
    expect(h.out()).toContain('Health:    ok (2 of 3 gateways answer through the tunnel)');

    const none = harness(await severalGateways(), { configDir: '/cfg' });
    expect(await runStatus(none.context, statusCommand(['--health', '--json']), async () => false)).toBe(1);
    const status = JSON.parse(none.out()) as TunnelStatus;
    expect(status.healthy).toBe(false);
    expect(status.gateways.map((gateway) => gateway.healthy)).toEqual([false, false, false]);
  });
});

describe('postern status with Docker labels', () => {
  it('lists the containers whose labels could not be published, one printable line each', async () => {
    const server = await startAgentServer(() => ({ status: 200, body: makeNode({ status: 'online' }) }));
    try {
      const system = connectedNode(server.url);
      system.files.set('/cfg/labels.json', {
        text: JSON.stringify({
          checkedAt: '2025-12-31T23:59:50.000Z',
          problems: [{ container: 'evil', key: 'http', message: 'postern.http.domain: bad\u001b[2J' }],
        }),
        mode: 0o600,
      });
      const h = harness(system, { configDir: '/cfg' });
      expect(await runStatus(h.context, statusCommand([]), unusedProbe)).toBe(0);
      expect(h.out()).toContain('Labels:    1 problem (checked 10 s ago)\n');
      expect(h.out()).toContain('           evil (http): postern.http.domain: bad?[2J\n');
    } finally {
      await server.close();
    }
  });
});
