import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRun } from '../test/requirements.js';
import { runCommand } from './exec.js';
import { createListenerLimits, LISTEN_CHAIN, type ListenerLimitSettings } from './listener-limits.js';

// The per-address limits against the real iptables, in a throw-away network namespace: installed, left as they are
// by a second apply and by a new control plane, repaired after a flush, removed at 0. Nothing leaves the namespace.

const ns = `pt-lim-${randomBytes(3).toString('hex')}`;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const inNs = (file: string, args: readonly string[], options?: { input?: string }) =>
  runCommand('ip', ['netns', 'exec', ns, file, ...args], options);
const settings: ListenerLimitSettings = {
  maxConnectionsPerAddress: 64,
  exempt: ['203.0.113.7'],
  webPorts: [80, 443, 8443],
  tcpPortRange: [30000, 30100],
};

/** The filter table's rules in the namespace, as iptables -S prints them. */
async function rules(): Promise<string[]> {
  return (await inNs('iptables', ['-S'])).stdout.split('\n').filter((line) => line !== '');
}
const ours = async (): Promise<string[]> => (await rules()).filter((line) => line.includes(LISTEN_CHAIN));

describe.skipIf(!canRun('iptables'))('per-address connection limits in a network namespace (real iptables)', () => {
  beforeAll(() => {
    execFileSync('ip', ['netns', 'add', ns]);
  });

  afterAll(() => {
    execFileSync('ip', ['netns', 'del', ns]);
  });

  it('installs its chain once, keeps it through a second apply and a new control plane, and repairs a flush', async () => {
    const limits = createListenerLimits(settings, silent, inNs);
    expect(await limits.ensure()).toBe(true);
    const installed = await ours();
    expect(installed).toEqual([
      `-N ${LISTEN_CHAIN}`,
      `-A INPUT ! -i lo -p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j ${LISTEN_CHAIN}`,
      `-A ${LISTEN_CHAIN} -s 203.0.113.7/32 -j RETURN`,
      `-A ${LISTEN_CHAIN} -p tcp -m multiport --dports 80,443,8443 -m connlimit --connlimit-above 64 --connlimit-mask 32 --connlimit-saddr -j DROP`,
      `-A ${LISTEN_CHAIN} -p tcp -m tcp --dport 30000:30100 -m connlimit --connlimit-above 64 --connlimit-mask 32 --connlimit-saddr -j DROP`,
    ]);
    expect(await limits.drift()).toEqual([]);
    limits.forget();
    await limits.ensure();
    await createListenerLimits(settings, silent, inNs).ensure();
    expect(await ours()).toEqual(installed);

    await inNs('iptables', ['-F', LISTEN_CHAIN]);
    expect(await limits.drift()).toHaveLength(3);
    limits.forget();
    await limits.ensure();
    expect(await ours()).toEqual(installed);
  });

  it('takes a changed limit in one commit, and removes the jump and the chain at 0, leaving other rules alone', async () => {
    await inNs('iptables', ['-A', 'INPUT', '-p', 'tcp', '--dport', '22', '-j', 'ACCEPT']);
    await createListenerLimits({ ...settings, maxConnectionsPerAddress: 2048, exempt: [] }, silent, inNs).ensure();
    expect((await ours()).filter((line) => line.includes('--connlimit-above 2048'))).toHaveLength(2);
    expect((await ours()).filter((line) => line.includes('RETURN'))).toEqual([]);
    const off = createListenerLimits({ ...settings, maxConnectionsPerAddress: 0 }, silent, inNs);
    expect(await off.ensure()).toBe(true);
    expect(await ours()).toEqual([]);
    expect(await rules()).toContain('-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT');
    expect(await off.drift()).toEqual([]);
  });
});
