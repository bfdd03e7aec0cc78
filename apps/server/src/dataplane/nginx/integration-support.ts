import { createServer, type AddressInfo } from 'node:net';
import { canRun } from '../../test/requirements.js';
import type { NginxRenderOptions } from './options.js';

// Shared by the tests that run real nginx on loopback (driver, routing overlay).

/** Real nginx needs root (it binds as root and drops workers to www-data) and the binary. */
export const canRunNginx = canRun('nginx');

export const silentLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export async function freeLoopbackPort(): Promise<number> {
  const [port] = await freeLoopbackPorts(1);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}

/**
 * `count` DIFFERENT free ports: each is held until all are chosen (the kernel may hand a just-closed port out again,
 * so asking one at a time can give the same port twice — seen as nginx's "duplicate listen").
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    for (const server of servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Render options of an HTTP instance on loopback (three free ports, the console host `gw.test` proxied to
 * `consoleUpstream`, no tunnel, no resolvers), as the integration tests and bench/traffic.ts run it.
 */
export async function loopbackRenderOptions(dirs: {
  prefixDir: string;
  certsDir: string;
  consoleUpstream: string;
}): Promise<NginxRenderOptions> {
  const [httpPort = 0, httpsPort = 0, noDomainHttpsPort = 0] = await freeLoopbackPorts(3);
  return {
    ...dirs,
    listenAddress: '127.0.0.1',
    httpPort,
    httpsPort,
    noDomainHttpsPort,
    consoleHost: 'gw.test',
    tunnelAddress: null,
    resolvers: [],
  };
}
