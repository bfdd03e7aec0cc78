import type { Command } from '../args.js';
import { resolveConfigDir, type CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { DEFAULT_INTERFACE, readSettings } from '../store.js';
import { isInterfacePresent, tearDownTunnel } from '../tunnel.js';

// `postern uninstall`: undoes what the gateway's install.sh (deploy/install.sh) did, in the order that leaves
// nothing running: the service first (its daemon would bring the tunnel back), then the tunnel, the config
// directory (token, WireGuard key) and this executable. Packages are only named.

/** Where install.sh puts the unit; the same path as deploy/install.sh's POSTERN_UNIT. */
export const SERVICE_UNIT = 'postern-node.service';
export const SERVICE_UNIT_PATH = `/etc/systemd/system/${SERVICE_UNIT}`;
/** install.sh's list of the packages it had to install (wireguard-tools, wireguard-go, iproute2). */
export const INSTALLED_PACKAGES_FILE = 'installed-packages';

export async function runUninstall(
  context: CliContext,
  command: Extract<Command, { kind: 'uninstall' }>,
): Promise<number> {
  const { system, stdout } = context;
  const configDir = resolveConfigDir(context, command.local.configDir);
  const removed: string[] = [];
  // A damaged settings file must not stop the removal of everything else.
  const settings = await readSettings(system, configDir).catch(() => null);
  const iface = command.local.iface ?? settings?.interface ?? DEFAULT_INTERFACE;

  // Without ip/wg there can be no interface of ours to remove.
  const hasTools = (await system.which('ip')) !== null && (await system.which('wg')) !== null;
  const wasUp = hasTools && (await isInterfacePresent(system, iface));

  const systemctl = await system.which('systemctl');
  if (systemctl !== null && (await system.exists(SERVICE_UNIT_PATH))) {
    // disable --now: stopped (its daemon takes the tunnel down on SIGTERM) and no longer started at boot.
    const disabled = await system.run(systemctl, ['disable', '--now', SERVICE_UNIT]);
    if (disabled.code !== 0)
      throw new CliError(`systemctl disable --now ${SERVICE_UNIT} failed: ${disabled.stderr.trim() || 'no message'}`);
    await system.removeFile(SERVICE_UNIT_PATH);
    await system.run(systemctl, ['daemon-reload']);
    // A unit that failed before keeps a "failed" entry until reset; nothing of it should stay listed.
    await system.run(systemctl, ['reset-failed', SERVICE_UNIT]);
    removed.push(`the service ${SERVICE_UNIT}`);
  }

  // The service's daemon takes the tunnel down when stopped; a tunnel of a plain `connect` is still up here.
  if (wasUp) {
    if (await isInterfacePresent(system, iface)) await tearDownTunnel(system, iface);
    removed.push(`the interface ${iface}`);
  }

  const packages = ((await system.readText(`${configDir}/${INSTALLED_PACKAGES_FILE}`)) ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((name) => /^[a-z0-9][a-z0-9.+-]*$/.test(name));
  if (await system.exists(configDir)) {
    await system.removeTree(configDir);
    removed.push(`${configDir} (URL, token, WireGuard key)`);
  }

  const executable = system.singleExecutable();
  if (executable !== null) {
    await system.removeFile(executable);
    removed.push(executable);
  }

  stdout.write(removed.length === 0 ? 'Nothing to remove.\n' : `Removed ${removed.join(', ')}.\n`);
  if (executable === null)
    stdout.write('This postern runs on a Node.js of its own (not the installed single executable): it stays.\n');
  if (packages.length > 0)
    stdout.write(
      `Left installed (other programs may use them): ${packages.join(' ')}; remove them with: apt-get remove ${packages.join(' ')}\n`,
    );
  stdout.write('The node stays in the gateway: delete it in the console.\n');
  return 0;
}
