import type { CliContext } from './context.js';
import { createFakeSystem, type FakeSystem } from './fake-system.js';
import { createHttpClient, type HttpClient, type TlsSettings } from './http-client.js';
import type { System } from './system.js';

// Runs the CLI as a user would, for tests only: output captured, OS effects faked, HTTP limited to loopback.

export interface Harness {
  context: CliContext;
  out: () => string;
  err: () => string;
}

/** Tests talk to loopback only: anything else fails loudly instead of leaving the machine (even as a DNS query). */
export function loopbackOnlyClient(settings: TlsSettings): HttpClient {
  const client = createHttpClient(settings);
  return (request) => {
    const host = request.connectHost ?? new URL(request.url).hostname;
    if (host !== '127.0.0.1') return Promise.reject(new Error(`test blocked ${request.url} (connecting to ${host})`));
    return client(request);
  };
}

export function harness(system: System, env: Partial<CliContext['env']> = {}): Harness {
  let out = '';
  let err = '';
  return {
    context: {
      createHttpClient: loopbackOnlyClient,
      system,
      env: {
        url: undefined,
        token: undefined,
        configDir: undefined,
        pin: undefined,
        path: '/usr/bin',
        refreshSeconds: undefined,
        ...env,
      },
      stdout: { write: (text) => (out += text) },
      stderr: { write: (text) => (err += text) },
      signal: new AbortController().signal,
    },
    out: () => out,
    err: () => err,
  };
}

export function connectedSystem(): FakeSystem {
  return createFakeSystem({ hasKernelWireguard: false, handshake: () => Math.floor(Date.UTC(2026, 0, 1) / 1000) - 5 });
}
