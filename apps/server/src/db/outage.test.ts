import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { buildTestApp, TEST_STORE, type TestApp } from '../test/build-test-app.js';
import { ADMIN_URL, postgresAvailable } from '../test/postgres.js';
import { DATABASE_UNAVAILABLE_MESSAGE } from './errors.js';

// The shared database goes away (a restart, a network cut): writes answer 503 with a clear message and change
// nothing; what the data plane serves stays; once the database is back, writes work again without a restart.

/** A TCP relay to PostgreSQL on loopback that the test can cut and restore (the database itself is shared). */
async function startRelay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((inbound) => {
        const outbound = connect(Number(target.port || 5432), target.hostname);
        for (const socket of [inbound, outbound]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(port, '127.0.0.1', () => {
        const address = server?.address();
        if (address && typeof address === 'object') port = address.port;
        resolve();
      });
    });
  await listen();
  return {
    urlOf(url: string): string {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    async cut(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
      server = null;
    },
    restore: listen,
  };
}

let t: TestApp | null = null;
let cutRelay: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cutRelay?.();
  await t?.cleanup();
  t = null;
});

describe.skipIf(TEST_STORE === 'postgres' || !(await postgresAvailable()))('the shared database away', () => {
  test('writes answer 503 with a clear message while it is away, serving goes on, and writes resume after', async () => {
    const relay = await startRelay(new URL(ADMIN_URL));
    cutRelay = () => relay.cut();
    const app = await buildTestApp({ postgres: true, databaseUrlFor: (url) => relay.urlOf(url) });
    t = app;
    const headers = { authorization: `Bearer ${await app.login()}` };
    const createNode = (name: string) =>
      app.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name } });
    expect((await createNode('before')).statusCode).toBe(201);
    const served = app.fakeDataPlane.lastState;
    expect(served?.peers).toHaveLength(1);

    await relay.cut();
    const during = await createNode('during');
    expect(during.statusCode).toBe(503);
    expect(during.json()).toEqual({
      message: DATABASE_UNAVAILABLE_MESSAGE,
      code: 'database_unavailable',
      messageCode: 'database_unavailable',
    });
    // Nothing told the data plane to drop what it serves.
    expect(app.fakeDataPlane.lastState).toBe(served);

    await relay.restore();
    const after = await createNode('after');
    expect(after.statusCode, after.body).toBe(201);
    const names = (await app.app.inject({ url: '/api/nodes?limit=100', headers })).json<{ data: { name: string }[] }>();
    expect(names.data.map((node) => node.name)).toEqual(expect.arrayContaining(['after', 'before']));
    expect(names.data.map((node) => node.name)).not.toContain('during');
  }, 30_000);
});
