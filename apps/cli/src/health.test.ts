import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { findClosedPort } from './fixtures.js';
import { probeGateway } from './health.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** Stands in for the gateway at its tunnel address (here 127.0.0.1). */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The gateway URL names a host that is never resolved: the probe connects to `host` only. */
const target = (port: number) => ({
  gatewayUrl: `http://gw.example.com:${port}`,
  host: '127.0.0.1',
  localAddress: '127.0.0.1',
});

describe('probeGateway', () => {
  it("GETs the gateway's tunnel health URL from the node address", async () => {
    const seen: string[] = [];
    const port = await listen((req, res) => {
      seen.push([req.method, req.url, req.headers.host, 'from', req.socket.remoteAddress].join(' '));
      res.writeHead(req.url === '/_postern/tunnel-health' ? 200 : 404).end('ok');
    });
    const healthUrl = `http://127.0.0.1:${port}/_postern/tunnel-health`;
    expect(await probeGateway({ healthUrl, localAddress: '127.0.0.1' })).toBe(true);
    expect(seen).toEqual([`GET /_postern/tunnel-health 127.0.0.1:${port} from 127.0.0.1`]);
    expect(await probeGateway({ healthUrl: `http://127.0.0.1:${port}/elsewhere`, localAddress: '127.0.0.1' })).toBe(
      false,
    );
  });

  it('for an older gateway, GETs /api/health at the tunnel address, from the node address, with the gateway URL as Host', async () => {
    const seen: string[] = [];
    const port = await listen((req, res) => {
      seen.push([req.method, req.url, req.headers.host, 'from', req.socket.remoteAddress].join(' '));
      res.writeHead(req.url === '/api/health' ? 200 : 404).end('{"status":"ok","version":"1"}');
    });
    expect(await probeGateway(target(port))).toBe(true);
    expect(seen).toEqual([`GET /api/health gw.example.com:${port} from 127.0.0.1`]);
  });

  it('is unhealthy when the gateway answers with an error or nothing listens', async () => {
    const port = await listen((_req, res) => res.writeHead(503).end());
    expect(await probeGateway(target(port))).toBe(false);
    expect(await probeGateway(target(await findClosedPort()))).toBe(false);
  });

  it('gives up after 2 s when the gateway does not answer', async () => {
    const port = await listen(() => undefined);
    const started = Date.now();
    expect(await probeGateway(target(port))).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    // Upper bound with room for a busy CI machine; what matters is that it does not hang.
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
