import { describe, expect, it } from 'vitest';
import type { AgentGateway } from '@postern/contract';
import type { AgentApi } from './api.js';
import { runDaemon, type DaemonTiming } from './daemon.js';
import { TokenRejectedError } from './errors.js';
import { createFakeSystem, type FakeSystem } from './fake-system.js';
import { GATEWAYS, OTHER_PRIVATE_KEY, makeNode, multiGatewayConfigText, nodeConfigText } from './fixtures.js';
import { bringUpTunnel } from './tunnel.js';
import { parseTunnelConfig } from './wg-config.js';

const timing: DaemonTiming = { checkMs: 1000, refreshMs: 5000, staleHandshakeMs: 20_000 };

/** An API whose config answers come from `configs` in turn (the last one repeats); a thrown value is thrown. */
function fakeApi(
  configs: (string | Error)[],
  tunnelHealthUrl?: string,
  gateways?: AgentGateway[],
): AgentApi & { configCalls: number } {
  const api = {
    configCalls: 0,
    async getConfig() {
      const answer = configs[Math.min(api.configCalls, configs.length - 1)] ?? nodeConfigText();
      api.configCalls++;
      if (answer instanceof Error) throw answer;
      return {
        node: makeNode(),
        config: answer,
        ...(tunnelHealthUrl === undefined ? {} : { tunnelHealthUrl }),
        ...(gateways === undefined ? {} : { gateways }),
      };
    },
  };
  return api as unknown as AgentApi & { configCalls: number };
}

interface Run {
  system: FakeSystem;
  log: string[];
  done: Promise<void>;
}

/**
 * Starts the daemon on a tunnel that is up and stops it once `until` holds (checked after every sleep of the fake
 * clock). The peer's handshake is fresh unless `isHandshakeStale`.
 */
async function startDaemon(
  api: AgentApi,
  until: (system: FakeSystem) => boolean,
  isHandshakeStale = false,
  prepare?: (system: FakeSystem) => void,
  several?: {
    configText: string;
    /** Whether a gateway (by name) answers at this moment of the fake clock. */
    isAnswering?: (name: string, now: number) => boolean;
  },
): Promise<Run> {
  const configText = several?.configText ?? nodeConfigText();
  const lastAnswer = new Map<string, number>();
  const system: FakeSystem = createFakeSystem({
    hasKernelWireguard: true,
    handshake: () => (isHandshakeStale ? 1 : Math.floor(system.clock.now / 1000)),
    // A gateway that answers handshakes every 10 s (WireGuard: every 2 min, against a stale age of 200 s); one that
    // stops keeps its last handshake.
    peerHandshake: (key) => {
      const name = GATEWAYS.find((gateway) => gateway.publicKey === key)?.name;
      if (name === undefined || several?.isAnswering === undefined) return undefined;
      const now = system.clock.now;
      const last = lastAnswer.get(key) ?? 0;
      if (several.isAnswering(name, now) && now - last >= 10_000) lastAnswer.set(key, now);
      return Math.floor((lastAnswer.get(key) ?? 0) / 1000);
    },
  });
  prepare?.(system);
  await bringUpTunnel(system, 'pstn-d', parseTunnelConfig(configText), '/cfg');
  const stop = new AbortController();
  const deadline = system.clock.now + 86_400_000;
  const sleep = system.sleep.bind(system);
  system.sleep = async (ms, signal) => {
    await sleep(ms, signal);
    if (until(system) || system.clock.now > deadline) stop.abort();
  };
  const log: string[] = [];
  const done = runDaemon({
    system,
    api,
    iface: 'pstn-d',
    configDir: '/cfg',
    configText,
    log: { write: (line) => log.push(line) },
    signal: stop.signal,
    timing,
    gateways: GATEWAYS,
  });
  return { system, log, done };
}

describe('runDaemon', () => {
  it('re-applies the config when the gateway changes the node key, and stores it', async () => {
    const changed = nodeConfigText({ privateKey: OTHER_PRIVATE_KEY });
    const run = await startDaemon(fakeApi([nodeConfigText(), changed]), (system) => system.setconfInputs.length >= 2);
    await run.done;
    expect(run.system.setconfInputs[1]).toContain(`PrivateKey = ${OTHER_PRIVATE_KEY}`);
    expect(run.system.files.get('/cfg/wireguard.conf')?.text).toBe(changed);
    expect(run.log.join('')).toContain("the gateway changed this node's configuration: recreating pstn-d");
  });

  it('stores a tunnel health URL the gateway now gives, keeping the other settings', async () => {
    const healthUrl = 'http://10.8.0.1:8080/_postern/tunnel-health';
    const settings = {
      url: 'https://gw.example.com',
      token: 'pstn_x',
      interface: 'pstn-d',
      tunnelHealthUrl: 'http://10.8.0.1:80/_postern/tunnel-health',
    };
    const api = fakeApi([nodeConfigText()], healthUrl);
    const stored = (system: FakeSystem) =>
      JSON.parse(system.files.get('/cfg/postern.json')?.text ?? '{}') as Record<string, unknown>;
    const run = await startDaemon(
      api,
      (system) => stored(system).tunnelHealthUrl === healthUrl,
      false,
      (system) => {
        system.files.set('/cfg/postern.json', { text: JSON.stringify(settings), mode: 0o600 });
      },
    );
    await run.done;
    expect(stored(run.system)).toEqual({ ...settings, tunnelHealthUrl: healthUrl });
    expect(run.system.files.get('/cfg/postern.json')?.mode).toBe(0o600);
    expect(run.system.setconfInputs).toHaveLength(1);
  });

  it('ignores a change that applies the same (a comment) and a config that does not parse', async () => {
    const api = fakeApi([`# rendered again\n${nodeConfigText()}`, 'garbage', nodeConfigText()]);
    const run = await startDaemon(api, () => api.configCalls >= 3);
    await run.done;
    expect(run.system.setconfInputs).toHaveLength(1);
    expect(run.log.join('')).toContain('Invalid WireGuard configuration from the gateway (line 1)');
    expect(run.log.join('')).toContain('keeping the current configuration');
  });

  it('recreates the interface when it disappears', async () => {
    let removed = false;
    const startedAt = Date.UTC(2026, 0, 1);
    const run = await startDaemon(fakeApi([nodeConfigText()]), (system) => {
      if (!removed && system.clock.now > startedAt + 2500) {
        system.links.delete('pstn-d');
        removed = true;
        return false;
      }
      return removed && system.links.has('pstn-d');
    });
    await run.done;
    expect(run.log.join('')).toContain('pstn-d disappeared: recreating pstn-d');
  });

  it('recreates the tunnel when the handshake goes stale (network loss)', async () => {
    const run = await startDaemon(fakeApi([nodeConfigText()]), (system) => system.setconfInputs.length >= 2, true);
    await run.done;
    expect(run.log.join('')).toMatch(/no handshake for 2\d s: recreating pstn-d/);
  });

  it('keeps the tunnel while the gateway is unreachable, and tears it down on stop', async () => {
    const unreachable = new Error('Cannot reach the gateway at http://gw: connect ECONNREFUSED');
    const api = fakeApi([unreachable]);
    const run = await startDaemon(api, () => api.configCalls >= 3);
    await run.done;
    expect(run.system.setconfInputs).toHaveLength(1);
    expect(run.log.join('')).toContain('Cannot reach the gateway at http://gw');
    expect(run.system.links.has('pstn-d')).toBe(false);
    expect(run.log.at(-1)).toMatch(/stopping: removing pstn-d\n$/);
  });

  it('stops with the server message when the token is revoked, taking the tunnel down', async () => {
    const run = await startDaemon(fakeApi([new TokenRejectedError('Token revoked')]), () => false);
    await expect(run.done).rejects.toThrow('The gateway refused the access token: Token revoked');
    expect(run.system.links.has('pstn-d')).toBe(false);
  });
});

describe('runDaemon with several gateways', () => {
  const [a, b, c] = GATEWAYS.map((gateway) => gateway.publicKey) as [string, string, string];
  const holderOf = (system: FakeSystem) =>
    GATEWAYS.find((gateway) =>
      system.peers
        .get('pstn-d')
        ?.find((peer) => peer.publicKey === gateway.publicKey)
        ?.allowedIps.some((cidr) => !cidr.endsWith('/32')),
    )?.name;
  /** Interface-level work after start: what would cut the node's open connections. */
  const recreations = (system: FakeSystem) =>
    system.calls.filter((call) => /^ip link (add|delete)|^wg setconf|^wireguard-go/.test(call));

  it('follows the gateway list on the running interface: peers added, removed and changed without a new interface', async () => {
    const twoGateways = GATEWAYS.slice(0, 2);
    const movedB = [GATEWAYS[0], { ...GATEWAYS[1], endpoint: 'gw-b2.example.com:51820' }] as AgentGateway[];
    const api = fakeApi(
      [
        multiGatewayConfigText({ gateways: twoGateways }),
        multiGatewayConfigText(),
        multiGatewayConfigText({ gateways: movedB }),
      ],
      undefined,
      GATEWAYS,
    );
    const run = await startDaemon(api, () => api.configCalls >= 4, false, undefined, {
      configText: multiGatewayConfigText({ gateways: twoGateways }),
      isAnswering: () => true,
    });
    const startCalls = recreations(run.system).length;
    await run.done;
    const log = run.log.join('');
    expect(log).toContain("the gateway changed this node's peers (added gw-c): applied in place");
    expect(log).toContain("the gateway changed this node's peers (removed gw-c): applied in place");
    expect(log).not.toContain('recreating');
    // Everything up to the final teardown: the one interface of the start, never recreated.
    expect(recreations(run.system).slice(0, -1)).toHaveLength(startCalls);
    expect(run.system.setconfInputs).toHaveLength(1);
    expect(run.system.calls).toContain(`wg set pstn-d peer ${c} remove`);
    expect(run.system.calls.filter((call) => call.includes('endpoint gw-b2.example.com:51820'))).toHaveLength(1);
    expect(run.system.calls).toContain('ip -4 route delete 10.8.0.253/32 dev pstn-d');
    expect(run.system.files.get('/cfg/wireguard.conf')?.text).toBe(multiGatewayConfigText({ gateways: movedB }));
  });

  it('moves the wide routes to the next gateway that handshakes when the first goes silent, without recreating', async () => {
    const run = await startDaemon(
      fakeApi([multiGatewayConfigText()], undefined, GATEWAYS),
      (system) => holderOf(system) !== 'gw-a' || system.clock.now > Date.UTC(2026, 0, 1) + 60_000,
      false,
      undefined,
      { configText: multiGatewayConfigText(), isAnswering: (name) => name !== 'gw-a' },
    );
    await run.done;
    expect(run.log.join('')).toMatch(/no handshake with gw-a for 2\d s: moving the routes from gw-a to gw-b/);
    expect(run.log.join('')).not.toContain('recreating');
    expect(run.system.setconfInputs).toHaveLength(1);
    expect(run.system.calls).toContain(`wg set pstn-d peer ${b} allowed-ips 10.8.0.254/32,10.8.0.0/24`);
    expect(run.system.calls).toContain(`wg set pstn-d peer ${a} allowed-ips 10.8.0.1/32`);
  });

  it("moves a full tunnel's default route, keeping its policy routing, and back once the first answers again", async () => {
    const start = Date.UTC(2026, 0, 1);
    let movedBack = false;
    const config = multiGatewayConfigText({ allowInternet: true });
    const run = await startDaemon(
      fakeApi([config], undefined, GATEWAYS),
      (system) => {
        movedBack ||= system.clock.now > start + 40_000 && holderOf(system) === 'gw-a';
        return movedBack || system.clock.now > start + 120_000;
      },
      false,
      undefined,
      // gw-a is silent for the first 30 s, gw-b until 25 s: the routes go to gw-c, and back to gw-a at a refresh.
      {
        configText: config,
        isAnswering: (name, now) =>
          name === 'gw-c' || (name === 'gw-b' && now > start + 25_000) || (name === 'gw-a' && now > start + 30_000),
      },
    );
    await run.done;
    const log = run.log.join('');
    expect(log).toMatch(/no handshake with gw-a for 2\d s: moving the routes from gw-a to gw-c/);
    expect(log).toContain(
      "gw-a answers again and comes first in the gateway's list: moving the routes from gw-c to gw-a",
    );
    expect(movedBack).toBe(true);
    expect(run.system.calls).toContain(`wg set pstn-d peer ${c} allowed-ips 10.8.0.253/32,0.0.0.0/0`);
    expect(run.system.calls.filter((call) => / rule (add|delete)/.test(call))).toEqual([
      'ip -4 rule add not fwmark 51820 table 51820',
      'ip -4 rule add table main suppress_prefixlength 0',
    ]);
    expect(log).not.toContain('recreating');
  });

  it('recreates the interface only when no gateway handshakes', async () => {
    const run = await startDaemon(
      fakeApi([multiGatewayConfigText()], undefined, GATEWAYS),
      (system) => system.setconfInputs.length >= 2,
      false,
      undefined,
      { configText: multiGatewayConfigText(), isAnswering: () => false },
    );
    await run.done;
    expect(run.log.join('')).toMatch(/no handshake for 2\d s: recreating pstn-d/);
  });
});
