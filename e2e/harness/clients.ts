import { fileURLToPath } from 'node:url';
import type { Lab } from './lab.js';
import { runInAllowingFailure } from './exec.js';
import type { ManagedProcess } from './processes.js';

// What a client on the public internet does, run inside the client namespace: HTTP(S) with curl (the domain
// is sent with --resolve, no DNS involved), TCP/UDP exchanges and a held TCP connection with net-client.mjs.

const NET_CLIENT = fileURLToPath(new URL('./programs/net-client.mjs', import.meta.url));

export interface HttpAnswer {
  /** HTTP status; 0 when no HTTP answer came (refused, reset, timeout). */
  status: number;
  body: string;
  error: string;
}

export interface HttpRequestOptions {
  /** Send the request to this address whatever the URL's host resolves to. */
  connectTo?: string;
  /** Local address to send from (one of the client's addresses). */
  sourceIp?: string;
  timeoutMs?: number;
}

export async function httpGet(ns: string, url: string, options: HttpRequestOptions = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const args = [
    '-sS',
    '-k',
    '--max-time',
    String((options.timeoutMs ?? 5000) / 1000),
    '-o',
    '-',
    '-w',
    '\n%{http_code}',
  ];
  if (options.connectTo) args.push('--resolve', `${target.hostname}:${port}:${options.connectTo}`);
  if (options.sourceIp) args.push('--interface', options.sourceIp);
  const result = await runInAllowingFailure(ns, 'curl', [...args, url], {
    timeoutMs: (options.timeoutMs ?? 5000) + 5000,
  });
  const cut = result.stdout.lastIndexOf('\n');
  return {
    status: Number(result.stdout.slice(cut + 1)) || 0,
    body: result.stdout.slice(0, Math.max(cut, 0)),
    error: result.stderr.trim(),
  };
}

export interface ExchangeAnswer {
  ok: boolean;
  reply: string;
  error: string;
}

async function exchange(
  mode: 'tcp' | 'udp',
  ns: string,
  host: string,
  port: number,
  message: string,
  options: { sourceIp?: string; timeoutMs?: number },
): Promise<ExchangeAnswer> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const args = [
    NET_CLIENT,
    mode,
    host,
    String(port),
    message,
    String(timeoutMs),
    ...(options.sourceIp ? [options.sourceIp] : []),
  ];
  const result = await runInAllowingFailure(ns, process.execPath, args, { timeoutMs: timeoutMs + 5000 });
  return { ok: result.code === 0, reply: result.stdout, error: result.stderr.trim() };
}

export const tcpExchange = (
  ns: string,
  host: string,
  port: number,
  message: string,
  options: { sourceIp?: string; timeoutMs?: number } = {},
) => exchange('tcp', ns, host, port, message, options);

export const udpExchange = (
  ns: string,
  host: string,
  port: number,
  message: string,
  options: { sourceIp?: string; timeoutMs?: number } = {},
) => exchange('udp', ns, host, port, message, options);

export interface HeldConnection {
  process: ManagedProcess;
  send(line: string): void;
  /** Resolves once the peer has closed (or reset) the connection. */
  waitForClose(timeoutMs: number): Promise<void>;
}

/** Opens a TCP connection from `ns` and keeps it open until the other side closes it. */
export async function holdTcpConnection(
  lab: Lab,
  ns: string,
  host: string,
  port: number,
  sourceIp?: string,
): Promise<HeldConnection> {
  const child = lab.spawn(
    ns,
    `tcp connection to ${host}:${port}`,
    process.execPath,
    [NET_CLIENT, 'tcp-hold', host, String(port), ...(sourceIp ? [sourceIp] : [])],
    {
      withStdin: true,
    },
  );
  await child.waitForOutput(/^open$/m, 5000);
  return {
    process: child,
    send: (line) => child.write(`${line}\n`),
    waitForClose: async (timeoutMs) => {
      await child.waitForOutput(/^closed$/m, timeoutMs).catch((error: unknown) => {
        // waitForOutput also rejects when the program ends; ending after "closed" is the expected case.
        if (!/^closed$/m.test(child.text)) throw error;
      });
    },
  };
}
