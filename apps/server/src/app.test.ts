import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { operations, type Operation } from '@postern/contract';
import { buildApp, VERSION } from './app.js';
import { createLogger } from './http/logger.js';
import { buildTestApp, TEST_ADMIN, type TestApp } from './test/build-test-app.js';
import { connectSse } from './test/sse-client.js';
import { waitFor } from './test/wait-for.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('system routes', () => {
  it('GET /api/health answers ok and the version without a session', async () => {
    t = await buildTestApp();
    const response = await t.app.inject({ url: '/api/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', version: VERSION });
  });

  it('GET /api/openapi.json describes every route with its schemas', async () => {
    t = await buildTestApp();
    const document = (await t.app.inject({ url: '/api/openapi.json' })).json();
    expect(document.openapi).toBe('3.0.3');
    const createNode = document.paths['/api/nodes'].post;
    expect(createNode.operationId).toBe('createNode');
    expect(createNode.requestBody.content['application/json'].schema.properties).toHaveProperty('gatewayNetwork');
    expect(createNode.responses['201'].content['application/json'].schema.required).toContain('token');
    expect(
      document.paths['/api/nodes/{id}/pats/{tokenId}/revoke'].patch.parameters.map((p: { name: string }) => p.name),
    ).toEqual(['id', 'tokenId']);
    expect(document.paths['/api/auth/login'].post.security).toEqual([]);
    expect(document.paths['/api/agent/node'].get.security).toEqual([{ nodeToken: [] }]);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/domains', '/api/services/{nodeId}/http', '/api/logs/stream']),
    );
    expect(createNode.responses['422'].description).toBe('code: validation');
    expect(createNode.responses['400'].description).toBe('code: dataplane_rejected');
    expect(createNode.responses['503'].description).toBe('code: dataplane_unavailable');
    expect(document.paths['/api/logs/stream'].get.security).toEqual([{ session: [] }, { sessionQuery: [] }]);
    expect(document.paths['/api/services/{nodeId}/tcp/{id}'].patch.operationId).toBe('updateTcpService');
  });

  it("declares each error answer's codes and values in /api/openapi.json (docs/api.md 'Message codes')", async () => {
    t = await buildTestApp();
    const document = (await t.app.inject({ url: '/api/openapi.json' })).json();
    interface Schema {
      properties?: Record<string, Schema & { items?: Schema }>;
    }
    const missing: string[] = [];
    let fieldErrors = 0;
    let messages = 0;
    for (const [path, methods] of Object.entries(document.paths as Record<string, object>)) {
      for (const [method, operation] of Object.entries(methods as Record<string, { responses?: object }>)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (Number(status) < 400) continue;
          const schema = (response as { content?: Record<string, { schema?: Schema }> }).content?.['application/json']
            ?.schema;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const properties = Object.keys(schema?.properties ?? {});
          for (const key of ['message', 'code', 'messageCode', 'params'])
            if (!properties.includes(key)) missing.push(`${where}: ${key}`);
          messages++;
          const field = schema?.properties?.errors?.properties?.body?.items;
          if (!field) continue;
          fieldErrors++;
          for (const key of ['field', 'message', 'code', 'params'])
            if (!(key in (field.properties ?? {}))) missing.push(`${where} errors.body[]: ${key}`);
        }
      }
    }
    expect(missing).toEqual([]);
    // Every operation with a body declares its 422, and every operation `{ message }` answers: the walk saw them.
    const withBody = (Object.values(operations) as Operation[]).filter((operation) => operation.body).length;
    expect(fieldErrors).toBeGreaterThanOrEqual(withBody);
    expect(messages).toBeGreaterThan(fieldErrors + Object.keys(operations).length);
  });

  it('serves every operation of the contract and refuses an /api route that is not one', async () => {
    t = await buildTestApp();
    for (const operation of Object.values(operations)) {
      expect(t.app.hasRoute({ method: operation.method, url: operation.path }), operation.name).toBe(true);
    }
    const app = await buildApp(t.deps, { consoleDir: null });
    try {
      expect(() => app.get('/api/side-door', () => ({ ok: true }))).toThrow(
        'GET /api/side-door is not registered from a contract operation',
      );
    } finally {
      await app.close();
    }
  });

  it('runs the cookie plugin only where cookies are set: a list answer has no cookie hook, sign-in still sets one', async () => {
    t = await buildTestApp();
    // @fastify/cookie adds an onSend hook to every route of the context it is registered in (http/cookies.ts).
    expect(t.app.hasReplyDecorator('setCookie')).toBe(false);
    const list = await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${await t.login()}` } });
    expect(list.statusCode).toBe(200);
    expect(list.headers['set-cookie']).toBeUndefined();
    const login = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: TEST_ADMIN });
    expect(String(login.headers['set-cookie'])).toMatch(
      /^token=[^;]+; Max-Age=\d+; Path=\/api; HttpOnly; SameSite=Strict$/,
    );
  });
});

describe('errors', () => {
  it('answers JSON 404 for unknown /api routes (after authentication) and 400 for malformed JSON', async () => {
    t = await buildTestApp();
    const headers = { authorization: `Bearer ${await t.login()}` };
    expect((await t.app.inject({ url: '/api/nope' })).statusCode).toBe(401);
    const unknown = await t.app.inject({ url: '/api/nope', headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      message: 'Route GET /api/nope not found',
      code: 'not_found',
      messageCode: 'route_not_found',
      params: { method: 'GET', path: '/api/nope' },
    });
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/nodes',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({
      message: 'The request body is not valid JSON',
      code: 'bad_request',
      messageCode: 'invalid_json',
    });
  });

  it("gives the framework's own refusals a code too: malformed id, body too large, not JSON", async () => {
    t = await buildTestApp();
    const headers = { authorization: `Bearer ${await t.login()}` };
    expect((await t.app.inject({ url: '/api/nodes/01', headers })).json()).toEqual({
      message: 'Not found',
      code: 'not_found',
      messageCode: 'not_found',
    });
    const large = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'admin', password: 'x'.repeat(5000) },
    });
    expect([large.statusCode, large.json().code]).toEqual([413, 'payload_too_large']);
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/nodes',
      headers: { ...headers, 'content-type': 'application/xml' },
      payload: '<name>n</name>',
    });
    expect([text.statusCode, text.json().code]).toEqual([415, 'unsupported_media_type']);
  });

  it('accepts an empty JSON body on body-less calls', async () => {
    t = await buildTestApp();
    const headers = { authorization: `Bearer ${await t.login()}`, 'content-type': 'application/json' };
    const node = (await t.app.inject({ method: 'POST', url: '/api/nodes', headers, payload: { name: 'n' } })).json();
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/api/nodes/${node.id}/disable`,
      headers,
      payload: '',
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('console', () => {
  it('serves the build and falls back to index.html for client routes, never for /api', async () => {
    t = await buildTestApp();
    const dir = mkdtempSync(join(tmpdir(), 'postern-console-'));
    try {
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Postern</title>');
      writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
      const app = await buildApp(t.deps, { consoleDir: dir });
      try {
        expect((await app.inject({ url: '/assets/app.js' })).body).toBe('console.log(1)');
        const page = await app.inject({ url: '/nodes/12' });
        expect(page.statusCode).toBe(200);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(page.body).toContain('<title>Postern</title>');
        expect((await app.inject({ url: '/' })).body).toContain('<title>Postern</title>');
        const api = await app.inject({ url: '/api/health/extra' });
        expect(api.statusCode).toBe(401);
        expect(api.headers['content-type']).toMatch(/json/);
      } finally {
        await app.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('logging', () => {
  const captureLog = (level = 'info') => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    return { lines, logger: createLogger(level, sink) };
  };

  it('logs the forwarded client address for requests through the local proxy, never a forged one', async () => {
    const { lines, logger } = captureLog();
    t = await buildTestApp({ logger });
    await t.app.inject({
      url: '/api/health',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    await t.app.inject({
      url: '/api/health',
      remoteAddress: '192.0.2.50',
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    const addresses = lines
      .map((line) => (JSON.parse(line) as { req?: { remoteAddress: string } }).req?.remoteAddress)
      .filter(Boolean);
    expect(addresses).toEqual(['203.0.113.7', '192.0.2.50']);
  });

  interface RequestLine {
    msg: string;
    level: number;
    reqId?: string;
    req?: { method: string; url: string; remoteAddress: string };
    res?: { statusCode: number };
    responseTime?: number;
  }
  const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as RequestLine);

  it('writes one line per request with its answer: the request, its status and time under one reqId', async () => {
    const { lines, logger } = captureLog();
    t = await buildTestApp({ logger });
    const token = await t.login();
    lines.length = 0;
    await t.app.inject({ url: '/api/nodes?page=1&limit=10', headers: { authorization: `Bearer ${token}` } });
    await t.app.inject({ url: '/api/nodes', headers: { authorization: 'Bearer forged' } });
    const log = parsed(lines);
    expect(log.map((line) => line.msg)).toEqual(['request completed', 'request completed']);
    const [listed, refused] = log;
    expect(listed).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/api/nodes?page=1&limit=10', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
    });
    expect(refused).toMatchObject({ req: { method: 'GET', url: '/api/nodes' }, res: { statusCode: 401 } });
    expect(typeof listed?.responseTime).toBe('number');
    expect(listed?.reqId).toBeTruthy();
    expect(refused?.reqId).not.toBe(listed?.reqId);
  });

  it('writes the line of a stream the client closed when it goes, its token masked', async () => {
    const { lines, logger } = captureLog();
    t = await buildTestApp({ logger });
    const token = await t.login();
    const { port } = new URL(await t.app.listen({ host: '127.0.0.1', port: 0 }));
    lines.length = 0;
    const stream = await connectSse(`http://127.0.0.1:${port}/api/nodes/stream?page=1&token=${token}`);
    expect(stream.status).toBe(200);
    stream.close();
    const closed = await waitFor(() => parsed(lines).find((line) => line.req?.url.startsWith('/api/nodes/stream')), {
      timeoutMs: 5000,
      what: "the closed stream's log line",
    });
    expect(closed).toMatchObject({
      msg: 'request closed by the client',
      req: { method: 'GET', url: '/api/nodes/stream?page=1&token=[redacted]' },
    });
    expect(lines.join('')).not.toContain(token);
  });

  it('never writes tokens, passwords or auth headers to the log', async () => {
    const { lines, logger } = captureLog('trace');
    t = await buildTestApp({ logger });
    const token = await t.login();
    await t.app.inject({ url: '/api/nodes', headers: { authorization: `Bearer ${token}`, cookie: `token=${token}` } });
    await t.app.inject({ url: `/api/logs/stream?domain=example.com&token=${token}&x=1` });
    await t.app.inject({ url: `/api/nodes/stream?token=${token}&id=999` });
    const log = lines.join('');
    expect(log).toContain('/api/nodes/stream?token=[redacted]&id=999');
    expect(log).toContain('token=[redacted]&x=1');
    expect(log).not.toContain(token);
    expect(log).not.toContain(TEST_ADMIN.password);
  });
});
