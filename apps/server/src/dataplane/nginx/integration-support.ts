import { execFileSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

// Shared by the tests that run real nginx on loopback (driver, routing overlay).

function hasNginx(): boolean {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Real nginx needs root (it binds as root and drops workers to www-data) and the binary. */
export const canRunNginx = process.getuid?.() === 0 && hasNginx();

export const silentLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
