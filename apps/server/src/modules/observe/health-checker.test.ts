import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeBackend, type HealthTarget } from './health-checker.js';

// The real probe against loopback backends: what counts as up (any answer below 500, a TCP connect) and how a
// failure reads in the console.

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
const target = (probe: HealthTarget['probe'], port: number, path = '/'): HealthTarget =>
  ({ type: probe === 'tcp' ? 'tcp' : 'http', id: 1, nodeId: 1, probe, host: '127.0.0.1', port, path, intervalSeconds: 5, timeoutSeconds: 1 });

describe('probeBackend', () => {
  it('calls an HTTP backend up when it answers below 500 (on the service path) and down with the status from 500', async () => {
    const paths: string[] = [];
    const port = await listen(createHttpServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(req.url === '/broken' ? 503 : 404).end();
    }));
    expect(await probeBackend(target('http', port, '/app'), 1000)).toMatchObject({ error: null });
    expect(paths).toEqual(['/app']);
    expect(await probeBackend(target('http', port, '/broken'), 1000)).toMatchObject({ error: 'HTTP 503' });
  });

  it('says "connection refused" for a stopped backend and gives up after the timeout on a silent one', async () => {
    const closed = createTcpServer();
    const port = await listen(closed);
    closed.close();
    expect(await probeBackend(target('http', port), 1000)).toMatchObject({ error: 'connection refused' });
    expect(await probeBackend(target('tcp', port), 1000)).toMatchObject({ error: 'connection refused' });

    // Accepts the connection and never answers.
    const silent = await listen(createTcpServer((socket) => servers.push({ close: () => socket.destroy() })));
    expect(await probeBackend(target('http', silent), 300)).toMatchObject({ error: 'no answer within 0.3 s' });
  });

  it('calls a TCP backend up once it accepts a connection', async () => {
    const port = await listen(createTcpServer((socket) => socket.end()));
    expect(await probeBackend(target('tcp', port), 1000)).toMatchObject({ error: null });
  });
});
