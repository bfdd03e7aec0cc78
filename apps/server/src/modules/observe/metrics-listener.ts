import { createServer } from 'node:http';
import { bearerOf } from '../../http/authenticate.js';
import { isMetricsToken } from './metrics.js';
import type { Observer } from './observer.js';

/**
 * `POSTERN_METRICS_ADDRESS`: a listener of its own that serves GET /metrics and nothing else, for a scraper on a
 * private network; with `POSTERN_METRICS_TOKEN` set it asks for the token too. Returns how to stop it.
 */
export async function startMetricsListener(
  address: string,
  observer: Observer,
  token: string | undefined,
): Promise<() => Promise<void>> {
  const split = address.lastIndexOf(':');
  const host = address.slice(0, split).replace(/^\[(.*)\]$/, '$1');
  const port = Number(address.slice(split + 1));
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
      return;
    }
    if (token !== undefined && !isMetricsToken(bearerOf(request.headers.authorization), token)) {
      response
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end('{"message":"Unauthorized"}');
      return;
    }
    observer.metrics.render().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': observer.metrics.registry.contentType, 'cache-control': 'no-store' })
          .end(text),
      () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
