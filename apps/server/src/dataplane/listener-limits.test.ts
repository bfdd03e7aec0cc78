import { describe, expect, it } from 'vitest';
import { CommandError } from './exec.js';
import {
  LISTEN_CHAIN,
  LISTEN_JUMP,
  createListenerLimits,
  renderListenerRestore,
  renderListenerRules,
  type ListenerLimitSettings,
} from './listener-limits.js';

const settings: ListenerLimitSettings = {
  maxConnectionsPerAddress: 1024,
  exempt: ['10.0.0.5', '192.168.10.0/24'],
  webPorts: [80, 443, 8443],
  tcpPortRange: [30000, 30100],
};

/** A fake `iptables`: records every call; `present` says which -C / -S checks succeed. */
function fakeIptables(present: (args: readonly string[]) => boolean = () => false, failRestore = false) {
  const calls: string[] = [];
  const run = (file: string, args: readonly string[], options?: { input?: string }) => {
    calls.push([file, ...args].join(' ') + (options?.input === undefined ? '' : ' <input>'));
    const isCheck = args[0] === '-C' || args[0] === '-S';
    if (file === 'iptables-restore' && failRestore)
      return Promise.reject(new CommandError('iptables-restore', 2, "Couldn't load match `connlimit'"));
    if (isCheck && !present(args)) return Promise.reject(new CommandError(file, 1, 'no such rule'));
    return Promise.resolve({ stdout: '', stderr: '' });
  };
  return { calls, run };
}

const logged: string[] = [];
const logger = {
  debug: () => undefined,
  info: (_: object, message: string) => logged.push(message),
  warn: () => undefined,
  error: (_: object, message: string) => logged.push(message),
};

describe('the per-address connection limits of the public listeners', () => {
  it('drops a new connection from an address over the limit on the web ports and, apart, on the TCP service ports', () => {
    expect(renderListenerRestore(settings)).toBe(`*filter
:POSTERN-LISTEN - [0:0]
-A POSTERN-LISTEN -s 10.0.0.5 -j RETURN
-A POSTERN-LISTEN -s 192.168.10.0/24 -j RETURN
-A POSTERN-LISTEN -p tcp -m multiport --dports 80,443,8443 -m connlimit --connlimit-above 1024 --connlimit-mask 32 --connlimit-saddr -j DROP
-A POSTERN-LISTEN -p tcp --dport 30000:30100 -m connlimit --connlimit-above 1024 --connlimit-mask 32 --connlimit-saddr -j DROP
COMMIT
`);
    // Only new TCP connections enter the chain, and never from loopback.
    expect(LISTEN_JUMP.join(' ')).toBe('! -i lo -p tcp --syn -j POSTERN-LISTEN');
  });

  it('writes nothing it has not validated', () => {
    expect(() => renderListenerRules({ ...settings, exempt: ['10.0.0.5 -j ACCEPT'] })).toThrow(/exempt source/);
    expect(() => renderListenerRules({ ...settings, webPorts: [80, 0] })).toThrow(/port/);
    expect(() => renderListenerRules({ ...settings, maxConnectionsPerAddress: 1.5 })).toThrow(/connection limit/);
    expect(() => createListenerLimits({ ...settings, exempt: ['::1'] }, logger)).toThrow(/exempt source/);
  });

  it('installs the chain and its jump once, adopts what is there, and writes again only after forget()', async () => {
    const iptables = fakeIptables();
    const limits = createListenerLimits(settings, logger, iptables.run);
    expect(await limits.ensure()).toBe(true);
    expect(iptables.calls).toEqual([
      'iptables-restore --noflush <input>',
      `iptables -C INPUT ${LISTEN_JUMP.join(' ')}`,
      `iptables -I INPUT 1 ${LISTEN_JUMP.join(' ')}`,
    ]);
    await limits.ensure();
    expect(iptables.calls).toHaveLength(3);

    // A new control plane finds the jump in place: the chain is refilled, the jump not added twice.
    const adopting = fakeIptables(() => true);
    const again = createListenerLimits(settings, logger, adopting.run);
    await again.ensure();
    expect(adopting.calls).toEqual([
      'iptables-restore --noflush <input>',
      `iptables -C INPUT ${LISTEN_JUMP.join(' ')}`,
    ]);
    again.forget();
    await again.ensure();
    expect(adopting.calls).toHaveLength(4);
  });

  it('removes the jump and the chain when the limit is 0, and touches nothing when they are not there', async () => {
    let jumps = 2;
    const iptables = fakeIptables((args) => (args[0] === '-C' ? jumps > 0 : true));
    const run: typeof iptables.run = (file, args, options) => {
      if (args[0] === '-D') jumps--;
      return iptables.run(file, args, options);
    };
    const off = createListenerLimits({ ...settings, maxConnectionsPerAddress: 0 }, logger, run);
    expect(await off.drift()).toEqual(['per-address connection limits are off, but the firewall still applies them']);
    expect(await off.ensure()).toBe(true);
    expect(iptables.calls.filter((call) => !call.includes(' -C '))).toEqual([
      `iptables -D INPUT ${LISTEN_JUMP.join(' ')}`,
      `iptables -D INPUT ${LISTEN_JUMP.join(' ')}`,
      `iptables -S ${LISTEN_CHAIN}`,
      `iptables -F ${LISTEN_CHAIN}`,
      `iptables -X ${LISTEN_CHAIN}`,
    ]);
    expect(await off.drift()).toEqual([]);

    const none = fakeIptables();
    await createListenerLimits({ ...settings, maxConnectionsPerAddress: 0 }, logger, none.run).ensure();
    expect(none.calls).toEqual([`iptables -C INPUT ${LISTEN_JUMP.join(' ')}`, `iptables -S ${LISTEN_CHAIN}`]);
  });

  it('reports a missing jump or rule to the drift check', async () => {
    const iptables = fakeIptables((args) => args[1] === 'INPUT' || args.includes('RETURN'));
    const limits = createListenerLimits(settings, logger, iptables.run);
    const differences = await limits.drift();
    expect(differences).toHaveLength(2);
    expect(differences[0]).toMatch(/rule "-p tcp -m multiport --dports 80,443,8443 .* -j DROP" is missing/);
    const noJump = createListenerLimits(settings, logger, fakeIptables((args) => args[1] !== 'INPUT').run);
    expect(await noJump.drift()).toEqual(['the firewall jump INPUT → POSTERN-LISTEN is missing']);
  });

  it('says once when the kernel cannot take the rules, and tries again on the next ensure()', async () => {
    logged.length = 0;
    const iptables = fakeIptables(() => false, true);
    const limits = createListenerLimits(settings, logger, iptables.run);
    expect(await limits.ensure()).toBe(false);
    expect(await limits.ensure()).toBe(false);
    expect(logged.filter((line) => line.includes('could not be set'))).toHaveLength(1);
    expect(iptables.calls.filter((call) => call.startsWith('iptables-restore'))).toHaveLength(2);
  });
});
