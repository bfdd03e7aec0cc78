import { afterEach, describe, expect, it } from 'vitest';
import { MALFORMED_TOKEN_MESSAGE, createAgentApi } from './api.js';
import { TokenRejectedError } from './errors.js';
import { findClosedPort, makeNode, makeToken, nodeConfigText, startAgentServer, type TestServer } from './fixtures.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('agent API client', () => {
  it('fetches the config with the token as a bearer token', async () => {
    const token = makeToken();
    server = await startAgentServer(() => ({ status: 200, body: { node: makeNode(), config: nodeConfigText() } }));
    const answer = await createAgentApi({ url: server.url, token }).getConfig();
    expect(answer.config).toBe(nodeConfigText());
    expect(server.requests).toEqual([
      { method: 'GET', url: '/api/agent/config', authorization: `Bearer ${token}`, body: '' },
    ]);
  });

  it('names the gateway and the socket error when nothing listens', async () => {
    const url = `http://127.0.0.1:${await findClosedPort()}`;
    const call = createAgentApi({ url, token: makeToken() }).getNode();
    await expect(call).rejects.toThrow(
      `Cannot reach the gateway at ${url}: connect ECONNREFUSED ${url.slice('http://'.length)}`,
    );
  });

  it.each(['Token revoked', 'Token expired', 'Invalid token'])(
    'passes the server message on for a 401 "%s"',
    async (message) => {
      server = await startAgentServer(() => ({ status: 401, body: { message } }));
      const call = createAgentApi({ url: server.url, token: makeToken() }).getConfig();
      await expect(call).rejects.toBeInstanceOf(TokenRejectedError);
      await expect(call).rejects.toThrow(`The gateway refused the access token: ${message}`);
    },
  );

  it('rejects a token with a wrong checksum before sending anything', async () => {
    server = await startAgentServer(() => ({ status: 200, body: {} }));
    const token = makeToken();
    const mistyped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(() => createAgentApi({ url: server?.url ?? '', token: mistyped })).toThrow(MALFORMED_TOKEN_MESSAGE);
    expect(() => createAgentApi({ url: server?.url ?? '', token: 'hunter2' })).toThrow(MALFORMED_TOKEN_MESSAGE);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a URL that is not http(s)', () => {
    expect(() => createAgentApi({ url: 'ftp://gw', token: makeToken() })).toThrow(/Invalid gateway URL "ftp:\/\/gw"/);
    expect(() => createAgentApi({ url: 'gw.example.com', token: makeToken() })).toThrow(/Invalid gateway URL/);
  });

  it('lists 422 field errors as "field: message" lines', async () => {
    server = await startAgentServer(() => ({
      status: 422,
      body: {
        message: 'Validation failed',
        errors: {
          body: [
            { field: 'port', message: 'This port is already used by service "mqtt"' },
            { field: 'name', message: 'This field is required' },
          ],
        },
      },
    }));
    const call = createAgentApi({ url: server.url, token: makeToken() }).createTcpService({
      name: 'x',
      backendPort: 1883,
    });
    await expect(call).rejects.toThrow(
      'Validation failed:\n  port: This port is already used by service "mqtt"\n  name: This field is required',
    );
  });

  it('shows the message of other errors and explains a 404 without a body', async () => {
    server = await startAgentServer((request) =>
      request.url.endsWith('/7/enable') ? { status: 404, body: { message: 'Service not found' } } : { status: 404 },
    );
    const api = createAgentApi({ url: server.url, token: makeToken() });
    await expect(api.setServiceEnabled('http', 7, true)).rejects.toThrow(
      'The gateway answered: Service not found (HTTP 404)',
    );
    await expect(api.getNode()).rejects.toThrow(/has no agent API \(HTTP 404\): is this the gateway's URL\?/);
  });

  it('does not follow a redirect (the token would go along) and names where it points', async () => {
    server = await startAgentServer(() => ({
      status: 301,
      headers: { location: 'https://gw.example.com/api/agent/config' },
    }));
    const call = createAgentApi({ url: server.url, token: makeToken() }).getConfig();
    await expect(call).rejects.toThrow(
      `The gateway at ${server.url} redirects to https://gw.example.com/api/agent/config (HTTP 301): pass the gateway's https:// address as --url`,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('reads every list page parameter and the service routes', async () => {
    server = await startAgentServer(() => ({ status: 200, body: { data: [], page: 2, limit: 100, total: 0 } }));
    const api = createAgentApi({ url: `${server.url}/`, token: makeToken() });
    await api.listServices('tcp', 2, 100);
    await api.deleteService('tcp', 9);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/agent/services/tcp?page=2&limit=100',
      'DELETE /api/agent/services/tcp/9',
    ]);
  });
});
