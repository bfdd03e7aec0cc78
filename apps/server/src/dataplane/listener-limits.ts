import { runCommand, type RunResult } from './exec.js';
import type { DataPlaneLogger } from './types.js';
import { assertIPv4OrCidr, assertPort } from './validate.js';

// One client must not take the public listeners from everyone else (the dataplane README, "The public listeners").
// nginx counts a connection against `limit_conn` only once it carries a request, so connections stalled in their
// TLS handshake escape it: the limit is the kernel's instead. Our own chain, jumped to from INPUT for new TCP
// connections only, drops a SYN from an IPv4 address that already holds the maximum (connlimit counts every
// connection from its first SYN until it closes, handshakes included) to:
//   - the web ports (80, 443, the no-domain HTTPS port) together, and
//   - apart from them, the TCP service ports together (each TCP/UDP service is an nginx of its own with 4,096
//     connections; UDP is left alone: a flow per source port that lingers 30 s in conntrack is no connection).
// Dropped, not reset: the client's kernel sends the SYN again after 1, 3, 7 ... s, so a legitimate client over the
// limit waits for a slot instead of failing, and a flooding one gets no fast refusals to spin on. Loopback is never
// limited, nor are the exempt sources (the operator's own load balancer or proxy), nor any other port or protocol.
// Written like the tunnel's chains (wireguard/firewall.ts): `iptables-restore --noflush` flushes and refills our
// chain in one commit, the jump is checked with -C and inserted when missing, so applying is idempotent and a new
// control plane adopts what the last one left. A limit of 0 removes the jump and the chain.

export const LISTEN_CHAIN = 'POSTERN-LISTEN';

export interface ListenerLimitSettings {
  /** Connections one IPv4 address may hold at once to each group of ports; 0: no limit (and no rules). */
  maxConnectionsPerAddress: number;
  /** Sources never limited (IPv4 addresses or networks). */
  exempt: readonly string[];
  /** HTTP, HTTPS and the no-domain HTTPS port. */
  webPorts: readonly number[];
  tcpPortRange: readonly [number, number];
}

export interface ListenerLimits {
  /** Makes the kernel's rules match the settings (a no-op when the last call already did); false: it could not. */
  ensure(): Promise<boolean>;
  /** What differs from the settings in the kernel, as sentences (the drift check). */
  drift(): Promise<string[]>;
  /** Forget what was applied, so the next ensure() writes everything again. */
  forget(): void;
}

type Run = (file: string, args: readonly string[], options?: { input?: string }) => Promise<RunResult>;

function connlimit(max: number): string[] {
  return ['-m', 'connlimit', '--connlimit-above', String(max), '--connlimit-mask', '32', '--connlimit-saddr'];
}

/** The chain's rules, each as iptables argv after `-A <chain>` (also used with -C by the drift check). */
export function renderListenerRules(settings: ListenerLimitSettings): string[][] {
  const max = settings.maxConnectionsPerAddress;
  if (!Number.isSafeInteger(max) || max < 1) throw new Error(`invalid connection limit: ${JSON.stringify(max)}`);
  const web = [
    '-p',
    'tcp',
    '-m',
    'multiport',
    '--dports',
    [...new Set(settings.webPorts.map((port) => assertPort(port, 'port')))].join(','),
  ];
  const [lo, hi] = settings.tcpPortRange.map((port) => assertPort(port, 'port range')) as [number, number];
  const tcp = ['-p', 'tcp', '--dport', `${lo}:${hi}`];
  return [
    ...settings.exempt.map((source) => ['-s', assertIPv4OrCidr(source, 'exempt source'), '-j', 'RETURN']),
    [...web, ...connlimit(max), '-j', 'DROP'],
    [...tcp, ...connlimit(max), '-j', 'DROP'],
  ];
}

/** iptables-restore input that replaces the chain's rules in one commit. */
export function renderListenerRestore(settings: ListenerLimitSettings): string {
  return [
    '*filter',
    `:${LISTEN_CHAIN} - [0:0]`,
    ...renderListenerRules(settings).map((rule) => `-A ${LISTEN_CHAIN} ${rule.join(' ')}`),
    'COMMIT',
    '',
  ].join('\n');
}

/** The jump into the chain: new TCP connections arriving on any interface but loopback. */
export const LISTEN_JUMP: readonly string[] = ['!', '-i', 'lo', '-p', 'tcp', '--syn', '-j', LISTEN_CHAIN];

export function createListenerLimits(
  settings: ListenerLimitSettings,
  logger: DataPlaneLogger,
  run: Run = runCommand,
): ListenerLimits {
  const isOn = settings.maxConnectionsPerAddress > 0;
  // Rendered once: a bad setting fails at the data plane's creation, not at the first packet.
  const restore = isOn ? renderListenerRestore(settings) : '';
  const rules = isOn ? renderListenerRules(settings) : [];
  let isApplied = false;
  let lastError = '';

  const succeeds = (args: readonly string[]): Promise<boolean> =>
    run('iptables', args).then(
      () => true,
      () => false,
    );
  const hasJump = (): Promise<boolean> => succeeds(['-C', 'INPUT', ...LISTEN_JUMP]);

  async function remove(): Promise<void> {
    // -D removes one copy: loop in case an old process inserted it twice.
    for (let i = 0; i < 8 && (await hasJump()); i++) await run('iptables', ['-D', 'INPUT', ...LISTEN_JUMP]);
    if (await succeeds(['-S', LISTEN_CHAIN])) {
      await run('iptables', ['-F', LISTEN_CHAIN]);
      await run('iptables', ['-X', LISTEN_CHAIN]);
      logger.info({}, 'per-address connection limits removed (POSTERN_MAX_CONNECTIONS_PER_ADDRESS=0)');
    }
  }

  async function install(): Promise<void> {
    await run('iptables-restore', ['--noflush'], { input: restore });
    if (!(await hasJump())) await run('iptables', ['-I', 'INPUT', '1', ...LISTEN_JUMP]);
  }

  return {
    async ensure() {
      if (isApplied) return true;
      try {
        await (isOn ? install() : remove());
        isApplied = true;
        lastError = '';
        return true;
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        // Said once per distinct failure: the drift check keeps reporting it meanwhile.
        if (text !== lastError)
          logger.error(
            { err },
            'per-address connection limits could not be set (the kernel needs connlimit: xt_connlimit); the listeners rely on their timeouts alone',
          );
        lastError = text;
        return false;
      }
    },

    async drift() {
      if (!isOn)
        return (await hasJump()) ? ['per-address connection limits are off, but the firewall still applies them'] : [];
      const differences: string[] = [];
      if (!(await hasJump())) differences.push(`the firewall jump INPUT → ${LISTEN_CHAIN} is missing`);
      for (const rule of rules)
        if (!(await succeeds(['-C', LISTEN_CHAIN, ...rule])))
          differences.push(`the per-address connection limit rule "${rule.join(' ')}" is missing`);
      return differences;
    },

    forget() {
      isApplied = false;
    },
  };
}
