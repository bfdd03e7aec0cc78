import type { ConnectionFlags } from './args.js';
import { createAgentApi, type AgentApi, type GatewayConnection } from './api.js';
import type { CliEnv } from './env.js';
import { UsageError } from './errors.js';
import { createHttpClient, type HttpClient, type TlsSettings } from './http-client.js';
import { parsePin } from './pin.js';
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
  /** Makes the HTTP client for given TLS settings; tests wrap the real one to keep requests on loopback. */
  createHttpClient?: (settings: TlsSettings) => HttpClient;
  /**
   * Asks the person at the terminal for one line, without echoing it; absent when standard input is not a terminal
   * (a script), where nothing can be asked.
   */
  askSecret?: (question: string) => Promise<string>;
}

export function resolveConfigDir(context: CliContext, flag: string | undefined): string {
  return flag ?? context.env.configDir ?? DEFAULT_CONFIG_DIR;
}

export interface ResolvedConnection extends GatewayConnection {
  configDir: string;
  insecure: boolean;
}

/**
 * Flag first, then what `connect` stored, then the environment. The pin and --insecure belong to the URL they
 * were given with: a stored pin applies to the stored URL only, never to a URL from a flag or the environment.
 */
export async function resolveConnection(context: CliContext, flags: ConnectionFlags): Promise<ResolvedConnection> {
  const configDir = resolveConfigDir(context, flags.configDir);
  const flagToken =
    flags.token ?? (flags.tokenFile === undefined ? undefined : await readTokenFile(context, flags.tokenFile));
  const stored =
    flags.url !== undefined && flagToken !== undefined ? null : await readSettings(context.system, configDir);
  const url = flags.url ?? stored?.url ?? context.env.url;
  const token = flagToken ?? stored?.token ?? context.env.token;
  if (url === undefined)
    throw new UsageError('No gateway URL: pass --url URL (or set POSTERN_URL, or run "postern connect" first)');
  if (token === undefined)
    throw new UsageError('No access token: pass --token TOKEN (or set POSTERN_TOKEN, or run "postern connect" first)');
  const isStoredUrl = flags.url === undefined && stored !== null;
  const pin = flags.pin ?? (isStoredUrl ? stored.pin : undefined) ?? pinFromEnv(context.env.pin);
  const insecure = flags.insecure === true || (isStoredUrl && stored.insecure === true);
  return { url, token, configDir, insecure, ...(pin === undefined ? {} : { pin }) };
}

/**
 * `--token-file FILE`: its first line, trimmed. `-` is standard input, how install.sh hands the token over: an
 * argument would show it to every user of the machine in `ps`.
 */
async function readTokenFile(context: CliContext, file: string): Promise<string> {
  const path = file === '-' ? '/dev/stdin' : file;
  const text = await context.system.readText(path);
  if (text === null) throw new UsageError(`--token-file: ${file} does not exist`);
  const token = text.split('\n', 1)[0]?.trim() ?? '';
  if (token === '') throw new UsageError(`--token-file: ${file === '-' ? 'standard input' : file} holds no token`);
  return token;
}

function pinFromEnv(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return parsePin(text);
  } catch (error) {
    throw new UsageError(`POSTERN_PIN: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The HTTP client every request of this run uses: one TLS policy for the API and the health probe. */
export function httpClientFor(context: CliContext, pin: string | undefined): HttpClient {
  return (context.createHttpClient ?? createHttpClient)(pin === undefined ? {} : { pin });
}

export function openAgentApi(context: CliContext, connection: GatewayConnection, timeoutMs?: number): AgentApi {
  return createAgentApi(connection, {
    client: httpClientFor(context, connection.pin),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

export async function openApi(context: CliContext, flags: ConnectionFlags): Promise<AgentApi> {
  return openAgentApi(context, await resolveConnection(context, flags));
}
