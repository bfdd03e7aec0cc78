import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { messageText } from '@postern/contract';

/**
 * Where the console build lives: the configured directory, else `apps/console/dist` found relative to this
 * file (both `src/http/` under tsx and the bundled `dist/main.js` sit two levels below `apps/`).
 */
export function resolveConsoleDir(configured: string | undefined): string | null {
  if (configured) return resolve(configured);
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, '../../console/dist'), resolve(here, '../../../console/dist')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

export const isApiPath = (url: string): boolean => url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');

/**
 * Serves the console build; any other GET outside /api gets index.html so client-side routes survive a reload.
 * Unknown /api paths answer a JSON 404, never the SPA.
 */
export async function registerConsole(app: FastifyInstance, consoleDir: string | null): Promise<void> {
  if (consoleDir) {
    await app.register(fastifyStatic, {
      root: consoleDir,
      // Hashed assets may be cached for long; index.html must be re-read to pick up a new build.
      setHeaders: (res, path) =>
        res.setHeader(
          'cache-control',
          path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
        ),
    });
  }
  app.setNotFoundHandler((request, reply) => {
    const isPage = (request.method === 'GET' || request.method === 'HEAD') && !isApiPath(request.url);
    if (consoleDir && isPage) return reply.type('text/html; charset=utf-8').sendFile('index.html');
    // The error handler's shape, message code included (docs/api.md "Message codes"); the path is the caller's, data.
    const params = { method: request.method, path: request.url.split('?')[0] ?? '' };
    return reply.code(404).send({
      message: messageText('route_not_found', params),
      code: 'not_found',
      messageCode: 'route_not_found',
      params,
    });
  });
}
