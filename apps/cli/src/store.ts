import path from 'node:path';
import { z } from 'zod';
import { AgentGatewaySchema, CertificatePinSchema } from '@postern/contract';
import { CliError } from './errors.js';
import type { System } from './system.js';

// What `connect` remembers for later commands: gateway URL, token, interface name, the certificate pin and
// plain-HTTP permission it connected with, and where the tunnel's health is probed, in postern.json; the wg-quick
// text from the gateway in wireguard.conf; with several gateways, their names and health URLs (for `status`).
// Both hold secrets: files 0600 in a 0700 directory.

export const DEFAULT_CONFIG_DIR = '/etc/postern';
export const DEFAULT_INTERFACE = 'postern0';
const SETTINGS_FILE = 'postern.json';
const WIREGUARD_FILE = 'wireguard.conf';

const StoredSettingsSchema = z.object({
  url: z.string(),
  token: z.string(),
  interface: z.string(),
  /** Absent in files from before pinning existed, and when the certificate is CA-verified. */
  pin: CertificatePinSchema.optional(),
  insecure: z.literal(true).optional(),
  /** From the gateway's agent config; absent for gateways from before it existed. */
  tunnelHealthUrl: z.string().optional(),
  /** Every gateway the tunnel reaches, in the config's peer order (agent config `gateways`); absent: one gateway. */
  gateways: z.array(AgentGatewaySchema).optional(),
});
export type StoredSettings = z.infer<typeof StoredSettingsSchema>;

export function settingsPath(configDir: string): string {
  return path.join(configDir, SETTINGS_FILE);
}

export function wireguardPath(configDir: string): string {
  return path.join(configDir, WIREGUARD_FILE);
}

export async function readSettings(system: System, configDir: string): Promise<StoredSettings | null> {
  const text = await system.readText(settingsPath(configDir));
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = null;
  }
  const settings = StoredSettingsSchema.safeParse(parsed);
  if (!settings.success) {
    throw new CliError(`${settingsPath(configDir)} is damaged: run "postern connect --url URL --token TOKEN" again`);
  }
  return settings.data;
}

export async function readWireguardConfig(system: System, configDir: string): Promise<string | null> {
  return system.readText(wireguardPath(configDir));
}

export async function saveConnection(
  system: System,
  configDir: string,
  settings: StoredSettings,
  wireguardConfig: string,
): Promise<void> {
  await system.ensurePrivateDir(configDir);
  await system.writePrivateFile(wireguardPath(configDir), wireguardConfig);
  await system.writePrivateFile(settingsPath(configDir), `${JSON.stringify(settings, null, 2)}\n`);
}

/** Changes some stored settings and keeps the rest (the daemon learns a new health URL). */
export async function updateSettings(
  system: System,
  configDir: string,
  changes: Partial<StoredSettings>,
): Promise<void> {
  const current = await readSettings(system, configDir);
  if (current === null) return;
  await system.writePrivateFile(settingsPath(configDir), `${JSON.stringify({ ...current, ...changes }, null, 2)}\n`);
}

export async function saveWireguardConfig(system: System, configDir: string, wireguardConfig: string): Promise<void> {
  await system.ensurePrivateDir(configDir);
  await system.writePrivateFile(wireguardPath(configDir), wireguardConfig);
}
