import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lab } from '../harness/lab.js';
import { generateKeyPair, startWireguard } from '../harness/wireguard.js';
import { startBackend } from '../harness/backends.js';
import { tcpExchange, udpExchange } from '../harness/clients.js';
import { runInAllowingFailure } from '../harness/exec.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// Proves the harness without the server: two namespaces joined by a veth, a WireGuard tunnel between them
// brought up from wg-quick text, and traffic through it.

describe.skipIf(!canRun('netns'))('bare WireGuard tunnel between two namespaces', () => {
  const lab = new Lab();
  let nodeNs = '';
  let hubNs = '';

  beforeAll(async () => {
    hubNs = await lab.createNamespace('hub');
    nodeNs = await lab.createNamespace('node');
    await lab.createVeth(
      { ns: hubNs, ifname: 'pub0', address: '10.213.250.1/24' },
      { ns: nodeNs, ifname: 'pub0', address: '10.213.250.2/24' },
    );
    const hub = generateKeyPair();
    const node = generateKeyPair();
    const hubConfig = [
      '[Interface]',
      'Address = 10.99.0.1/24',
      `PrivateKey = ${hub.privateKey}`,
      'ListenPort = 51820',
      '',
      '[Peer]',
      `PublicKey = ${node.publicKey}`,
      'AllowedIPs = 10.99.0.2/32',
    ].join('\n');
    const nodeConfig = [
      '[Interface]',
      'Address = 10.99.0.2/32',
      `PrivateKey = ${node.privateKey}`,
      '',
      '[Peer]',
      `PublicKey = ${hub.publicKey}`,
      'Endpoint = 10.213.250.1:51820',
      'AllowedIPs = 10.99.0.0/24',
      'PersistentKeepalive = 25',
    ].join('\n');
    await startWireguard(lab, hubNs, lab.ifName('hub'), hubConfig);
    await startWireguard(lab, nodeNs, lab.ifName('node'), nodeConfig);
    await startBackend(lab, nodeNs, 'tcp', '10.99.0.2', 7000, 'node');
    await startBackend(lab, nodeNs, 'udp', '10.99.0.2', 7001, 'node');
  });

  afterAll(async () => {
    await lab.destroy();
    expect(lab.leftovers()).toEqual([]);
  });

  it('pings the node through the tunnel', async () => {
    const ping = await runInAllowingFailure(hubNs, 'ping', ['-c', '1', '-W', '3', '10.99.0.2']);
    expect(ping.code, ping.stdout + ping.stderr).toBe(0);
  });

  it('carries TCP and UDP to backends bound to the tunnel address', async () => {
    expect(await tcpExchange(hubNs, '10.99.0.2', 7000, 'hello')).toMatchObject({ ok: true, reply: 'node:hello' });
    expect(await udpExchange(hubNs, '10.99.0.2', 7001, 'ping')).toMatchObject({ ok: true, reply: 'node:ping' });
  });

  it('does not reach the backend outside the tunnel', async () => {
    // The backend listens on the tunnel address only; the underlay address must not answer.
    const answer = await tcpExchange(hubNs, '10.213.250.2', 7000, 'hello', { timeoutMs: 1000 });
    expect(answer.ok).toBe(false);
  });
});
