import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { HttpService } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { waitFor } from '../../test/wait-for.js';
import { createApiClient, insertNode } from '../services/test-support.js';

// The log stream is a long-lived SSE response, so these tests use a real loopback socket instead of inject.

let t: TestApp;
let token: string;
let api: ReturnType<typeof createApiClient>;
let baseUrl: string;

beforeEach(async () => {
  t = await buildTestApp();
  token = await t.login();
  api = createApiClient(t, token);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await t.cleanup();
});

interface EventReader {
  response: IncomingMessage;
  /** Resolves with the JSON of the next `data:` event; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<unknown>;
  close(): void;
}

function openStream(path: string): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, (response) => {
      let buffer = '';
      const events: unknown[] = [];
      let waiter: (() => void) | null = null;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data) events.push(JSON.parse(data.slice('data: '.length)));
        }
        waiter?.();
      });
      resolve({
        response,
        next(timeoutMs = 2000) {
          return new Promise((resolveEvent, rejectEvent) => {
            const deadline = setTimeout(() => rejectEvent(new Error('no event before the deadline')), timeoutMs);
            const check = () => {
              if (events.length === 0) return;
              clearTimeout(deadline);
              waiter = null;
              resolveEvent(events.shift());
            };
            waiter = check;
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /api/logs/stream', () => {
  test('streams the lines of one domain as JSON arrays', async () => {
    await api('POST', '/api/domains', { domain: 'app.example.com' });
    const stream = await openStream(`/api/logs/stream?domain=app.example.com&token=${token}`);
    expect(stream.response.statusCode).toBe(200);
    expect(stream.response.headers['content-type']).toContain('text/event-stream');
    t.fakeDataPlane.pushLogLines([
      { domain: 'other.example.com', type: 'http', serviceId: 9, text: '[INFO] not for us' },
      { domain: 'app.example.com', type: 'http', serviceId: 1, text: '[INFO] GET / 200' },
    ]);
    expect(await stream.next()).toEqual(['[INFO] GET / 200']);
    stream.close();
  });

  test('streams the lines of one service', async () => {
    const node = await insertNode(t.deps);
    const { body: svc } = await api<HttpService>('POST', `/api/services/${node.id}/http`, {
      name: 'web',
      pathLocation: '/web',
    });
    const stream = await openStream(`/api/logs/stream?type=http&id=${svc.id}&token=${token}`);
    t.fakeDataPlane.pushLogLines([
      { domain: null, type: 'http', serviceId: svc.id, text: '[ERROR] GET /web 502' },
      { domain: null, type: 'tcp', serviceId: svc.id, text: '[INFO] other type, same id' },
    ]);
    expect(await stream.next()).toEqual(['[ERROR] GET /web 502']);
    stream.close();
  });

  test('drops its subscription when the client goes away', async () => {
    await api('POST', '/api/domains', { domain: 'app.example.com' });
    const logs = t.fakeDataPlane.logs;
    const subscribe = logs.subscribe.bind(logs);
    let active = 0;
    vi.spyOn(logs, 'subscribe').mockImplementation((filter, onLines) => {
      active++;
      const unsubscribe = subscribe(filter, onLines);
      return () => {
        active--;
        unsubscribe();
      };
    });
    const stream = await openStream(`/api/logs/stream?domain=app.example.com&token=${token}`);
    expect(active).toBe(1);
    stream.close();
    await waitFor(() => active === 0, { timeoutMs: 2000, intervalMs: 10, what: 'the stream to end' });
  });

  test('answers 404 for an unknown domain or service and 401 without a token', async () => {
    expect((await api('GET', `/api/logs/stream?domain=nope.example.com&token=${token}`)).status).toBe(404);
    expect((await api('GET', `/api/logs/stream?type=tcp&id=42&token=${token}`)).status).toBe(404);
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/logs/stream?domain=app.example.com' });
    expect(anonymous.statusCode).toBe(401);
  });
});
