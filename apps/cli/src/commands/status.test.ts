import { describe, expect, it } from 'vitest';
import { parseCommand } from '../args.js';
import { connectedSystem, harness } from '../cli-harness.js';
import type { FakeSystem } from '../fake-system.js';
import type { ProbeTarget } from '../health.js';
import { makeNode, makeToken, nodeConfigText, startAgentServer } from '../fixtures.js';
import { runStatus } from './status.js';

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
