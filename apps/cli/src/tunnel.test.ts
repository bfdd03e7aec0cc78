import { describe, expect, it } from 'vitest';
import { TOOLS_MISSING_MESSAGE } from './errors.js';
import { createFakeSystem } from './fake-system.js';
import { nodeConfigText } from './fixtures.js';
import { bringUpTunnel, isInterfaceName, readPeerStates, tearDownTunnel } from './tunnel.js';
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
        publicKey: 'PEERKEY=',
        endpoint: '192.0.2.1:51820',
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
