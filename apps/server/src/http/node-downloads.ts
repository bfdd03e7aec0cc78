import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

// What a machine needs to become a node, served on the console's host without sign-in: install.sh at
// `/install.sh` (the console's one-line install fetches it there) and, under `/downloads/`, the client for each
// architecture, the systemd unit and SHA256SUMS, which install.sh checks every download against. All of it comes
// from scripts/build-node-client.sh (apps/cli/dist/release); nothing is secret. A fixed list of names: no path
// from the request reaches the file system.

export const NODE_DOWNLOADS: Readonly<Record<string, string>> = {
  'install.sh': 'text/plain; charset=utf-8',
  SHA256SUMS: 'text/plain; charset=utf-8',
  'postern-node.service': 'text/plain; charset=utf-8',
  'postern-linux-x64.gz': 'application/gzip',
  'postern-linux-arm64.gz': 'application/gzip',
};

/**
 * Where the built node client lives: the configured directory (POSTERN_NODE_CLIENT_DIR), else
 * `apps/cli/dist/release` found relative to this file (as the console build is); null when it was not built.
 */
export function resolveNodeClientDir(configured: string | undefined): string | null {
  if (configured) return resolve(configured);
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, '../../cli/dist/release'), resolve(here, '../../../cli/dist/release')];
  return candidates.find((dir) => existsSync(join(dir, 'SHA256SUMS'))) ?? null;
}

export function registerNodeDownloads(app: FastifyInstance, dir: string | null): void {
  const send = async (name: string, reply: FastifyReply) => {
    const type = Object.hasOwn(NODE_DOWNLOADS, name) ? NODE_DOWNLOADS[name] : undefined;
    if (type === undefined) return reply.code(404).send({ message: `No download named ${name}`, code: 'not_found' });
    const path = dir === null ? null : join(dir, name);
    // Read per request, never cached: an upgrade (or a rebuilt client) is served at once.
    const size =
      path === null
        ? null
        : await stat(path).then(
            (info) => (info.isFile() ? info.size : null),
            () => null,
          );
    if (path === null || size === null) {
      return reply.code(404).send({
        message: 'This gateway was built without the node client: run bash scripts/build-node-client.sh on it',
        code: 'not_found',
      });
    }
    return reply
      .header('content-type', type)
      .header('content-length', size)
      .header('cache-control', 'no-cache')
      .send(createReadStream(path));
  };
  app.get('/install.sh', (_request, reply) => send('install.sh', reply));
  app.get<{ Params: { file: string } }>('/downloads/:file', (request, reply) => send(request.params.file, reply));
}
