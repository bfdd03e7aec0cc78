import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { chmod, chown, rm } from 'node:fs/promises';
import type { FileOwner } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import type { RouteIndex } from './overlay.js';
import { decideRoute } from './overlay-route.js';

// nginx asks this server (`auth_request`, over a unix socket only nginx's workers may open) where a request for
// a host in the overlay goes. It answers from the newest desired state in memory: 200 with the service and
// upstream, 200 with no upstream (nginx answers 404), or 403.

export interface OverlayRouter {
  /** The routing of the newest desired state (published before any overlay file points nginx here). */
  setRoutes(index: RouteIndex): void;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export interface OverlayRouterOptions {
  socketPath: string;
  /** nginx's worker user: the socket is theirs to connect to, and nobody else's. */
  owner?: FileOwner;
  logger: DataPlaneLogger;
}

const MAX_SOCKET_PATH_BYTES = 107;

const header = (req: IncomingMessage, name: string): string => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : '';
};

export function createOverlayRouter(options: OverlayRouterOptions): OverlayRouter {
  let routes: RouteIndex | null = null;
  let server: Server | null = null;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      const decision = routes === null ? { kind: 'none' as const } : decideRoute(routes, {
        host: header(req, 'x-gw-host'),
        requestUri: header(req, 'x-gw-uri'),
        clientAddress: header(req, 'x-gw-addr'),
      });
      if (decision.kind === 'denied') res.statusCode = 403;
      else if (decision.kind === 'proxy') {
        res.setHeader('X-Gw-Svc', String(decision.serviceId));
        res.setHeader('X-Gw-Up', decision.upstream);
      }
      res.end();
    } catch (err) {
      options.logger.error({ err }, 'overlay router: cannot route a request');
      res.statusCode = 500;
      res.end();
    }
  }

  return {
    setRoutes(index) {
      routes = index;
    },

    async listen() {
      // sockaddr_un holds 108 bytes with the terminating NUL; a longer path fails with an unhelpful EINVAL.
      if (Buffer.byteLength(options.socketPath) > MAX_SOCKET_PATH_BYTES) {
        throw new Error(`the overlay router's socket path ${options.socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes: choose a shorter POSTERN_DATA_DIR`);
      }
      await rm(options.socketPath, { force: true });
      const created = createServer({ keepAliveTimeout: 5000 }, handle);
      await new Promise<void>((resolve, reject) => {
        created.once('error', reject);
        created.listen(options.socketPath, () => {
          created.off('error', reject);
          resolve();
        });
      });
      server = created;
      if (options.owner) await chown(options.socketPath, process.getuid?.() ?? 0, options.owner.gid);
      await chmod(options.socketPath, options.owner ? 0o660 : 0o600);
    },

    async close() {
      const running = server;
      server = null;
      if (running) await new Promise<void>((resolve) => { running.close(() => resolve()); running.closeAllConnections(); });
      await rm(options.socketPath, { force: true });
    },
  };
}
