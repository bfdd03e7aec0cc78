import { describe, expect, it } from 'vitest';
import { TOOLS_MISSING_MESSAGE } from './errors.js';
import { createFakeSystem } from './fake-system.js';
import { GATEWAYS, GATEWAY_PUBLIC_KEY, multiGatewayConfigText, nodeConfigText } from './fixtures.js';
import {
  bringUpTunnel,
  isInterfaceName,
  moveWideRoutes,
  readPeerStates,
  tearDownTunnel,
  updatePeers,
} from './tunnel.js';
import { parseTunnelConfig } from './wg-config.js';

const config = parseTunnelConfig(nodeConfigText());

describe('bringUpTunnel', () => {
  it('uses kernel WireGuard when the kernel has it: link, keys, address, MTU, route', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    expect(await bringUpTunnel(system, 'pstn0', config, '/cfg')).toBe('kernel');
    expect(system.calls.filter((call) => !call.includes(' show'))).toEqual([
      'ip link add dev pstn0 type wireguard',
      'wg setconf pstn0 /cfg/.pstn0.setconf',
      'ip -4 address add 10.8.0.2/32 dev pstn0',
      'ip link set mtu 1420 up dev pstn0',
      'ip -4 route replace 10.8.0.0/24 dev pstn0',
    ]);
    expect(system.setconfInputs).toEqual([config.setconf]);
    expect(system.files.has('/cfg/.pstn0.setconf')).toBe(false);
    expect(system.calls).not.toContain('wireguard-go pstn0');
  });

  it('falls back to wireguard-go when the kernel has no WireGuard', async () => {
    const system = createFakeSystem({ hasKernelWireguard: false });
    expect(await bringUpTunnel(system, 'pstn0', config, '/cfg')).toBe('wireguard-go');
    expect(system.calls).toContain('wireguard-go pstn0');
    expect(system.links.has('pstn0')).toBe(true);
  });

  it('asks for the tools when wg is missing, before touching anything', async () => {
    const system = createFakeSystem({ tools: ['ip', 'wireguard-go'] });
    await expect(bringUpTunnel(system, 'pstn0', config, '/cfg')).rejects.toThrow(TOOLS_MISSING_MESSAGE);
    expect(system.calls).toEqual([]);
  });

  it('asks for the tools when neither the kernel nor wireguard-go can make the interface', async () => {
    const system = createFakeSystem({ tools: ['ip', 'wg'], hasKernelWireguard: false });
    await expect(bringUpTunnel(system, 'pstn0', config, '/cfg')).rejects.toThrow(TOOLS_MISSING_MESSAGE);
  });

  it('routes a full tunnel through its own table so WireGuard traffic itself stays outside', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    await bringUpTunnel(system, 'pstn0', parseTunnelConfig(nodeConfigText({ allowedIps: '0.0.0.0/0' })), '/cfg');
    expect(system.calls).toEqual(
      expect.arrayContaining([
        'wg set pstn0 fwmark 51820',
        'ip -4 route replace 0.0.0.0/0 dev pstn0 table 51820',
        'ip -4 rule add not fwmark 51820 table 51820',
        'ip -4 rule add table main suppress_prefixlength 0',
      ]),
    );
    expect(system.calls).not.toContain('ip -4 route replace 0.0.0.0/0 dev pstn0');
  });

  it('replaces an interface left over from an earlier run', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    system.links.add('pstn0');
    await bringUpTunnel(system, 'pstn0', config, '/cfg');
    expect(system.calls.indexOf('ip link delete dev pstn0')).toBeLessThan(
      system.calls.indexOf('ip link add dev pstn0 type wireguard'),
    );
  });
});

describe('several gateways', () => {
  const [a, b, c] = GATEWAYS.map((gateway) => gateway.publicKey) as [string, string, string];
  const allowed = async (system: ReturnType<typeof createFakeSystem>) =>
    Object.fromEntries((await readPeerStates(system, 'pstn0')).map((peer) => [peer.publicKey, peer.allowedIps]));
  /** What a change did besides reading state: no `show`, no `rule show`. */
  const changes = (system: ReturnType<typeof createFakeSystem>, from: number) =>
    system.calls.slice(from).filter((call) => !/ show( |$)/.test(call));

  it('brings up one peer per gateway with a route for every AllowedIPs entry', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    await bringUpTunnel(system, 'pstn0', parseTunnelConfig(multiGatewayConfigText()), '/cfg');
    expect(system.calls.filter((call) => call.includes(' route '))).toEqual([
      'ip -4 route replace 10.8.0.1/32 dev pstn0',
      'ip -4 route replace 10.8.0.0/24 dev pstn0',
      'ip -4 route replace 10.8.0.254/32 dev pstn0',
      'ip -4 route replace 10.8.0.253/32 dev pstn0',
    ]);
    expect(await allowed(system)).toEqual({
      [a]: ['10.8.0.1/32', '10.8.0.0/24'],
      [b]: ['10.8.0.254/32'],
      [c]: ['10.8.0.253/32'],
    });
  });

  it('gives a full tunnel its policy routing once, whichever peer holds the default route', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    await bringUpTunnel(system, 'pstn0', parseTunnelConfig(multiGatewayConfigText({ allowInternet: true })), '/cfg');
    expect(system.calls.filter((call) => call.includes('fwmark'))).toEqual([
      'wg set pstn0 fwmark 51820',
      'ip -4 rule add not fwmark 51820 table 51820',
    ]);
    expect(system.calls).toContain('ip -4 route replace 0.0.0.0/0 dev pstn0 table 51820');
  });

  it('follows a new gateway list on the running interface: wg set per peer, routes added and removed', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    const from = parseTunnelConfig(multiGatewayConfigText({ gateways: GATEWAYS.slice(0, 2) }));
    await bringUpTunnel(system, 'pstn0', from, '/cfg');
    const start = system.calls.length;
    const to = parseTunnelConfig(
      multiGatewayConfigText({
        gateways: [GATEWAYS[0], GATEWAYS[2]].map((gateway, index) =>
          index === 0 ? { ...gateway!, endpoint: 'gw-a2.example.com:51821' } : gateway!,
        ),
      }),
    );
    await updatePeers(system, 'pstn0', { from, fromHolder: a, to, toHolder: a }, '/cfg');
    expect(changes(system, start)).toEqual([
      `wg set pstn0 peer ${a} preshared-key /cfg/.pstn0.psk endpoint gw-a2.example.com:51821 persistent-keepalive 25 allowed-ips 10.8.0.1/32,10.8.0.0/24`,
      `wg set pstn0 peer ${c} preshared-key /cfg/.pstn0.psk endpoint gw-c.example.com:51820 persistent-keepalive 25 allowed-ips 10.8.0.253/32`,
      `wg set pstn0 peer ${b} remove`,
      'ip -4 route replace 10.8.0.253/32 dev pstn0',
      'ip -4 route delete 10.8.0.254/32 dev pstn0',
    ]);
    expect(system.files.has('/cfg/.pstn0.psk')).toBe(false);
    expect(await allowed(system)).toEqual({ [a]: ['10.8.0.1/32', '10.8.0.0/24'], [c]: ['10.8.0.253/32'] });
  });

  it('leaves unchanged peers alone and keeps the wide routes where they were moved', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    const from = parseTunnelConfig(multiGatewayConfigText({ gateways: GATEWAYS.slice(0, 2) }));
    await bringUpTunnel(system, 'pstn0', from, '/cfg');
    await moveWideRoutes(system, 'pstn0', from, a, b);
    const start = system.calls.length;
    await updatePeers(
      system,
      'pstn0',
      { from, fromHolder: b, to: parseTunnelConfig(multiGatewayConfigText()), toHolder: b },
      '/cfg',
    );
    expect(changes(system, start)).toEqual([
      `wg set pstn0 peer ${c} preshared-key /cfg/.pstn0.psk endpoint gw-c.example.com:51820 persistent-keepalive 25 allowed-ips 10.8.0.253/32`,
      'ip -4 route replace 10.8.0.253/32 dev pstn0',
    ]);
    expect((await allowed(system))[b]).toEqual(['10.8.0.254/32', '10.8.0.0/24']);
  });

  it('turns the full tunnel on and off in place', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    const split = parseTunnelConfig(multiGatewayConfigText());
    const full = parseTunnelConfig(multiGatewayConfigText({ allowInternet: true }));
    await bringUpTunnel(system, 'pstn0', split, '/cfg');
    let start = system.calls.length;
    await updatePeers(system, 'pstn0', { from: split, fromHolder: a, to: full, toHolder: a }, '/cfg');
    expect(changes(system, start)).toEqual([
      `wg set pstn0 peer ${a} preshared-key /cfg/.pstn0.psk endpoint gw-a.example.com:51820 persistent-keepalive 25 allowed-ips 10.8.0.1/32,0.0.0.0/0`,
      'wg set pstn0 fwmark 51820',
      'ip -4 route replace 0.0.0.0/0 dev pstn0 table 51820',
      'ip -4 rule add not fwmark 51820 table 51820',
      'ip -4 rule add table main suppress_prefixlength 0',
      'ip -4 route delete 10.8.0.0/24 dev pstn0',
    ]);
    start = system.calls.length;
    await updatePeers(system, 'pstn0', { from: full, fromHolder: a, to: split, toHolder: a }, '/cfg');
    expect(changes(system, start).slice(1)).toEqual([
      'ip -4 route replace 10.8.0.0/24 dev pstn0',
      'ip -4 route delete 0.0.0.0/0 dev pstn0 table 51820',
      'ip -4 rule delete not fwmark 51820 table 51820',
      'ip -4 rule delete table main suppress_prefixlength 0',
      'wg set pstn0 fwmark off',
    ]);
  });

  it('moves the wide routes to another peer, new holder first', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    const config = parseTunnelConfig(multiGatewayConfigText({ allowInternet: true }));
    await bringUpTunnel(system, 'pstn0', config, '/cfg');
    const start = system.calls.length;
    await moveWideRoutes(system, 'pstn0', config, a, c);
    expect(changes(system, start)).toEqual([
      `wg set pstn0 peer ${c} allowed-ips 10.8.0.253/32,0.0.0.0/0`,
      `wg set pstn0 peer ${a} allowed-ips 10.8.0.1/32`,
    ]);
    expect(await allowed(system)).toEqual({
      [a]: ['10.8.0.1/32'],
      [b]: ['10.8.0.254/32'],
      [c]: ['10.8.0.253/32', '0.0.0.0/0'],
    });
  });
});

describe('tearDownTunnel', () => {
  it('stops wireguard-go through its socket, which removes the interface', async () => {
    const system = createFakeSystem({ hasKernelWireguard: false });
    await bringUpTunnel(system, 'pstn0', config, '/cfg');
    await tearDownTunnel(system, 'pstn0');
    expect(system.links.has('pstn0')).toBe(false);
    expect(await system.exists('/var/run/wireguard/pstn0.sock')).toBe(false);
  });

  it('deletes a kernel interface and does nothing when none exists', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true });
    await bringUpTunnel(system, 'pstn0', config, '/cfg');
    await tearDownTunnel(system, 'pstn0');
    expect(system.links.size).toBe(0);
    await expect(tearDownTunnel(system, 'pstn0')).resolves.toBeUndefined();
  });
});

describe('readPeerStates', () => {
  it('reads handshake and traffic from wg show dump, without keys', async () => {
    const system = createFakeSystem({ hasKernelWireguard: true, handshake: () => 1_767_225_600 });
    await bringUpTunnel(system, 'pstn0', config, '/cfg');
    expect(await readPeerStates(system, 'pstn0')).toEqual([
      {
        publicKey: GATEWAY_PUBLIC_KEY,
        endpoint: 'gw.example.com:51820',
        allowedIps: ['10.8.0.0/24'],
        latestHandshake: 1_767_225_600,
        transferRx: 1536,
        transferTx: 2048,
      },
    ]);
    expect(await readPeerStates(system, 'absent')).toEqual([]);
  });
});

describe('isInterfaceName', () => {
  it('accepts Linux interface names only', () => {
    expect(isInterfaceName('postern0')).toBe(true);
    expect(isInterfaceName('pstn-1a2b3c4d5e')).toBe(true);
    expect(isInterfaceName('a'.repeat(16))).toBe(false);
    expect(isInterfaceName('wg0;reboot')).toBe(false);
    expect(isInterfaceName('../x')).toBe(false);
  });
});
