import type { Command } from '../args.js';
import { resolveConfigDir, type CliContext } from '../context.js';
import { DEFAULT_INTERFACE, readSettings } from '../store.js';
import { isInterfacePresent, tearDownTunnel } from '../tunnel.js';

export async function runDisconnect(
  context: CliContext,
  command: Extract<Command, { kind: 'disconnect' }>,
): Promise<number> {
  const configDir = resolveConfigDir(context, command.local.configDir);
  const iface = command.local.iface ?? (await readSettings(context.system, configDir))?.interface ?? DEFAULT_INTERFACE;
  if (!(await isInterfacePresent(context.system, iface))) {
    context.stdout.write(`Not connected: ${iface} does not exist.\n`);
    return 0;
  }
  await tearDownTunnel(context.system, iface);
  context.stdout.write(`Disconnected: removed ${iface}.\n`);
  return 0;
}
