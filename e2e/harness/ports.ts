import { createServer, type AddressInfo } from 'node:net';

/** A TCP port nothing listens on right now at `host` (the kernel picks it; the caller binds it next). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
