import { describe, expect, it } from 'vitest';
import type { AgentApi } from './api.js';
import { runDaemon, type DaemonTiming } from './daemon.js';
import { TokenRejectedError } from './errors.js';
import { createFakeSystem, type FakeSystem } from './fake-system.js';
import { OTHER_PRIVATE_KEY, makeNode, nodeConfigText } from './fixtures.js';
import { bringUpTunnel } from './tunnel.js';
import { parseTunnelConfig } from './wg-config.js';

const timing: DaemonTiming = { checkMs: 1000, refreshMs: 5000, staleHandshakeMs: 20_000 };

/** An API whose config answers come from `configs` in turn (the last one repeats); a thrown value is thrown. */
function fakeApi(configs: (string | Error)[], tunnelHealthUrl?: string): AgentApi & { configCalls: number } {
  const api = {
    configCalls: 0,
    async getConfig() {
      const answer = configs[Math.min(api.configCalls, configs.length - 1)] ?? nodeConfigText();
      api.configCalls++;
      if (answer instanceof Error) throw answer;
      return { node: makeNode(), config: answer, ...(tunnelHealthUrl === undefined ? {} : { tunnelHealthUrl }) };
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
): Promise<Run> {
  const system: FakeSystem = createFakeSystem({
    hasKernelWireguard: true,
    handshake: () => (isHandshakeStale ? 1 : Math.floor(system.clock.now / 1000)),
  });
  prepare?.(system);
  await bringUpTunnel(system, 'pstn-d', parseTunnelConfig(nodeConfigText()), '/cfg');
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
    configText: nodeConfigText(),
    log: { write: (line) => log.push(line) },
    signal: stop.signal,
    timing,
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
