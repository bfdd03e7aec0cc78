import { describe, expect, it } from 'vitest';
import { harness } from '../cli-harness.js';
import { createFakeSystem } from '../fake-system.js';
import { runCli } from '../run.js';
import { SERVICE_UNIT_PATH } from './uninstall.js';

// `postern uninstall` against the fake system: what install.sh put on the machine, and what must be gone after.

const ok = { code: 0, stdout: '', stderr: '' };

function installedSystem() {
  const system = createFakeSystem({
    tools: ['ip', 'wg', 'wireguard-go', 'systemctl'],
    answers: {
      'systemctl disable --now postern-node.service': ok,
      'systemctl daemon-reload': ok,
      'systemctl reset-failed postern-node.service': ok,
    },
  });
  system.files.set('/etc/postern', { text: '', mode: 0o700 });
  system.files.set('/etc/postern/postern.json', {
    text: JSON.stringify({ url: 'https://gw.example.com', token: 'pstn_x', interface: 'pstn-u1' }),
    mode: 0o600,
  });
  system.files.set('/etc/postern/wireguard.conf', { text: '[Interface]\n', mode: 0o600 });
  system.files.set('/etc/postern/installed-packages', { text: 'wireguard-tools\nwireguard-go\n', mode: 0o600 });
  system.files.set(SERVICE_UNIT_PATH, { text: '[Unit]\n', mode: 0o644 });
  system.files.set('/usr/local/bin/postern', { text: 'ELF', mode: 0o755 });
  system.executable.path = '/usr/local/bin/postern';
  // The tunnel as wireguard-go runs it: the interface and its control socket.
  system.links.add('pstn-u1');
  system.files.set('/var/run/wireguard/pstn-u1.sock', { text: '', mode: 0o755 });
  return system;
}

describe('postern uninstall', () => {
  it('stops and removes the service, then the tunnel, the config directory and the executable', async () => {
    const system = installedSystem();
    const h = harness(system);
    expect(await runCli(['uninstall'], h.context)).toBe(0);
    expect(system.calls.filter((call) => call.startsWith('systemctl'))).toEqual([
      'systemctl disable --now postern-node.service',
      'systemctl daemon-reload',
      'systemctl reset-failed postern-node.service',
    ]);
    expect(system.links.size).toBe(0);
    expect([...system.files.keys()]).toEqual([]);
    expect(h.out()).toBe(
      'Removed the service postern-node.service, the interface pstn-u1, /etc/postern (URL, token, WireGuard key), /usr/local/bin/postern.\n' +
        'Left installed (other programs may use them): wireguard-tools wireguard-go; remove them with: apt-get remove wireguard-tools wireguard-go\n' +
        'The node stays in the gateway: delete it in the console.\n',
    );
    expect(h.out() + h.err()).not.toContain('pstn_x');

    // Twice (the binary is gone, so from a postern on Node): nothing left, nothing fails.
    system.executable.path = null;
    const again = harness(system);
    expect(await runCli(['uninstall'], again.context)).toBe(0);
    expect(again.out()).toContain('Nothing to remove.');
  });

  it('keeps Node.js when it runs on one (the node image, a checkout), and works without systemd', async () => {
    const system = installedSystem();
    system.executable.path = null;
    const h = harness({
      ...system,
      which: async (command) => (command === 'systemctl' ? null : `/usr/bin/${command}`),
    });
    expect(await runCli(['uninstall'], h.context)).toBe(0);
    expect(system.calls.some((call) => call.startsWith('systemctl'))).toBe(false);
    expect(system.files.has('/usr/local/bin/postern')).toBe(true);
    expect(system.files.has('/etc/postern/postern.json')).toBe(false);
    expect(h.out()).toContain('runs on a Node.js of its own');
  });

  it('stops when systemd refuses, before anything else is removed', async () => {
    const system = createFakeSystem({ tools: ['ip', 'wg', 'systemctl'] });
    system.files.set(SERVICE_UNIT_PATH, { text: '[Unit]\n', mode: 0o644 });
    system.files.set('/etc/postern', { text: '', mode: 0o700 });
    const h = harness(system);
    expect(await runCli(['uninstall'], h.context)).toBe(1);
    expect(h.err()).toMatch(/^postern: systemctl disable --now postern-node.service failed/);
    expect(system.files.has('/etc/postern')).toBe(true);
  });
});
