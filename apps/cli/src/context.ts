import type { ConnectionFlags } from './args.js';
import { createAgentApi, type AgentApi, type FetchLike } from './api.js';
import type { CliEnv } from './env.js';
import { UsageError } from './errors.js';
import { DEFAULT_CONFIG_DIR, readSettings } from './store.js';
import type { System } from './system.js';

// What every command receives: OS access, environment, output streams and the stop signal of the process.

export interface Output {
  write(text: string): void;
}

export interface CliContext {
  system: System;
  env: CliEnv;
  stdout: Output;
  stderr: Output;
  /** Fires on SIGTERM/SIGINT. */
  signal: AbortSignal;
  fetch?: FetchLike;
}

export function resolveConfigDir(context: CliContext, flag: string | undefined): string {
  return flag ?? context.env.configDir ?? DEFAULT_CONFIG_DIR;
}

/** Flag first, then what `connect` stored, then the environment. */
export async function resolveConnection(context: CliContext, flags: ConnectionFlags): Promise<{ url: string; token: string; configDir: string }> {
  const configDir = resolveConfigDir(context, flags.configDir);
  const stored = flags.url !== undefined && flags.token !== undefined ? null : await readSettings(context.system, configDir);
  const url = flags.url ?? stored?.url ?? context.env.url;
  const token = flags.token ?? stored?.token ?? context.env.token;
  if (url === undefined) throw new UsageError('No gateway URL: pass --url URL (or set POSTERN_URL, or run "postern connect" first)');
  if (token === undefined) throw new UsageError('No access token: pass --token TOKEN (or set POSTERN_TOKEN, or run "postern connect" first)');
  return { url, token, configDir };
}

export async function openApi(context: CliContext, flags: ConnectionFlags): Promise<AgentApi> {
  const { url, token } = await resolveConnection(context, flags);
  return createAgentApi({ url, token, ...(context.fetch ? { fetch: context.fetch } : {}) });
}
