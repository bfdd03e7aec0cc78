import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createApiClient,
  type Transport,
  type TransportRequest,
  type TransportResponse,
  UnexpectedAnswerError,
} from './api-client.js';
import type { Node } from './entities.js';
import { ApiError } from './errors.js';
import { operations } from './operations.js';
import { routes } from './routes.js';

const node: Node = {
  id: 7,
  name: 'n1',
  address: '10.44.0.2',
  allowInternet: false,
  isGateway: false,
  gatewayNetwork: null,
  gatewayNetworks: [],
  isLocal: false,
  enabled: true,
  status: 'offline',
  clientIp: null,
  latestHandshakeTimestamp: null,
  transferRx: 0,
  transferTx: 0,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
};

/** A transport that records what it was asked and answers `answer`. */
function recording(answer: Partial<TransportResponse> & { json?: unknown }): {
  transport: Transport;
  sent: TransportRequest[];
} {
  const sent: TransportRequest[] = [];
  const transport: Transport = (request) => {
    sent.push(request);
    const body = answer.json === undefined ? (answer.body ?? '') : JSON.stringify(answer.json);
    return Promise.resolve({ status: answer.status ?? 200, headers: answer.headers ?? {}, body });
  };
  return { transport, sent };
}

describe('createApiClient', () => {
  it('fills path parameters, sends the query, the JSON body and the bearer token, and parses the answer', async () => {
    const { transport, sent } = recording({ json: { ...node, extra: 'dropped' } });
    const client = createApiClient({ transport, baseUrl: 'https://gw.test/', token: () => 'tok' });
    const answer = await client.call(operations.updateNode, { params: { id: 7 }, body: { name: 'n1' } });
    expect(answer).toEqual(node);
    expectTypeOf(answer).toEqualTypeOf<Node>();
    expect(sent).toEqual([
      {
        method: 'PATCH',
        url: 'https://gw.test/api/nodes/7',
        headers: { Accept: 'application/json', Authorization: 'Bearer tok', 'Content-Type': 'application/json' },
        body: '{"name":"n1"}',
      },
    ]);

    await client.call(operations.listNodes, { query: { page: 2, limit: 5, type: undefined } }).catch(() => undefined);
    expect(sent[1]?.url).toBe('https://gw.test/api/nodes?page=2&limit=5');
  });

  it('encodes path parameters, so a value cannot add a segment', () => {
    const client = createApiClient();
    expect(client.url(operations.getDomain, { params: { id: '1/../2' } })).toBe('/api/domains/1%2F..%2F2');
  });

  it('turns an error answer into an ApiError with the message, code and field errors', async () => {
    const { transport } = recording({
      status: 422,
      json: {
        message: 'Validation failed',
        code: 'validation',
        errors: { body: [{ field: 'name', message: 'This field is required' }] },
      },
    });
    const error = await createApiClient({ transport })
      .call(operations.createNode, { body: { name: '' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 422,
      message: 'Request failed with status code 422',
      serverMessage: 'Validation failed',
      code: 'validation',
      fieldErrors: [{ field: 'name', message: 'This field is required' }],
    });
  });

  it('reads an error body without a code (an older gateway) or without JSON', async () => {
    const old = await createApiClient(recording({ status: 400, json: { message: 'no' } }))
      .call(routes.health)
      .catch((e: unknown) => e);
    expect(old).toMatchObject({ status: 400, serverMessage: 'no', code: null, fieldErrors: [] });
    const html = await createApiClient(recording({ status: 502, body: '<html>' }))
      .call(routes.health)
      .catch((e: unknown) => e);
    expect(html).toMatchObject({ status: 502, serverMessage: null, code: null });
  });

  it('refuses an answer its schema does not allow', async () => {
    const { transport } = recording({ json: { ...node, id: 'seven' } });
    await expect(createApiClient({ transport }).call(operations.getNode, { params: { id: 7 } })).rejects.toBeInstanceOf(
      UnexpectedAnswerError,
    );
  });

  it('resolves 204 operations with undefined and bare routes with the unchecked JSON', async () => {
    await expect(
      createApiClient(recording({ status: 204 })).call(operations.deleteNode, { params: { id: 7 } }),
    ).resolves.toBeUndefined();
    const bare = await createApiClient(recording({ json: { anything: 1 } })).call(routes.session);
    expectTypeOf(bare).toBeUnknown();
    expect(bare).toEqual({ anything: 1 });
  });

  it('gives a file with the name from Content-Disposition', async () => {
    const { transport, sent } = recording({
      body: '[Interface]\n',
      headers: {
        'content-disposition': 'attachment; filename="postern-n1.conf"',
        'content-type': 'text/plain; charset=utf-8',
      },
    });
    const download = await createApiClient({ transport }).call(operations.downloadNodeConfig, { params: { id: 7 } });
    expect(download).toEqual({
      content: '[Interface]\n',
      filename: 'postern-n1.conf',
      mediaType: 'text/plain; charset=utf-8',
    });
    expect(sent[0]?.headers.Accept).toBe('text/plain');
  });

  it('builds event stream URLs and refuses to call them', async () => {
    const client = createApiClient({ baseUrl: 'http://127.0.0.1:3000' });
    expect(client.url(operations.logStream, { query: { domain: 'a.test', token: 't' } })).toBe(
      'http://127.0.0.1:3000/api/logs/stream?domain=a.test&token=t',
    );
    // @ts-expect-error: an event stream takes no call input
    await expect(client.call(operations.logStream, {})).rejects.toThrow(/event stream/);
  });

  it('types inputs from the operation', () => {
    const client = createApiClient({ transport: recording({}).transport });
    // @ts-expect-error: the id is required
    void client.call(operations.getNode, { params: {} }).catch(() => undefined);
    // @ts-expect-error: createNode needs a body
    void client.call(operations.createNode, {}).catch(() => undefined);
    // @ts-expect-error: a body the schema does not allow
    void client.call(operations.createNode, { body: { name: 1 } }).catch(() => undefined);
  });
});
