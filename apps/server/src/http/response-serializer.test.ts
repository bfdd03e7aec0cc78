import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operations } from '@postern/contract';
import { registerOperation } from './operation.js';
import { compileResponseSerializer, responseSerializer } from './response-serializer.js';
import { useZodCompilers } from './zod-provider.js';

// The answer's schema decides which keys leave the server (response-serializer.ts): a column the schema does not name
// never does, whether the serialiser is compiled or zod's.

const node = {
  id: 2,
  name: 'web',
  address: '10.44.0.2',
  allowInternet: false,
  isGateway: false,
  gatewayNetwork: null,
  allowTokenNetworks: false,
  applyError: null,
  isLocal: false,
  enabled: true,
  status: 'online' as const,
  clientIp: null,
  latestHandshakeTimestamp: null,
  transferRx: 1,
  transferTx: 2,
  created_at: '2026-11-27T00:00:00.000Z',
  updated_at: '2026-11-27T00:00:00.000Z',
};
// A row spread into an answer: the columns the schema names and the ones it does not.
const leakyNode = { ...node, privateKeyEnc: 'v1:SECRET-PRIVATE', presharedKeyEnc: 'v1:SECRET-PSK' };

const service = {
  id: 7,
  nodeId: 2,
  name: 'app',
  domain: 'app.example.com',
  backendHost: '127.0.0.1',
  backendPort: 8080,
  allowedIps: [],
  blockedIps: [],
  enabled: true,
  publicAccess: 'public',
  applyError: null,
  expiresAt: null,
  createdBy: 'admin',
  disabledBy: null,
  expirySetBy: null,
  created_at: '2026-11-27T00:00:00.000Z',
  updated_at: '2026-11-27T00:00:00.000Z',
  pathLocation: '/',
  backendProto: 'http',
  ssl: 'self-signed',
};

const keysDeep = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(keysDeep)
    : typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)])
      : [];

describe('response serialisers', () => {
  it('the list answers are compiled', () => {
    expect(compileResponseSerializer(operations.listNodes.response.schema)).toBeTypeOf('function');
    expect(compileResponseSerializer(operations.listHttpServices.response.schema)).toBeTypeOf('function');
  });

  it('a compiled answer writes only what its schema names, at every depth, and fills its defaults', () => {
    const write = compileResponseSerializer(operations.listHttpServices.response.schema);
    const source = { kind: 'docker-labels', container: 'web', key: 'http', digest: 'a'.repeat(64) };
    const answer = {
      data: [{ ...service, source: { ...source, hostPath: '/var/run/SECRET' }, secretColumn: 'SECRET' }],
      page: 1,
      limit: 10,
      total: 1,
      debug: 'SECRET',
    };
    const written = write?.(answer) ?? '';
    expect(written).not.toContain('SECRET');
    expect(JSON.parse(written)).toEqual({ data: [{ ...service, source }], page: 1, limit: 10, total: 1 });
    // A value where the schema wants a string is never written as the object it is.
    const odd = write?.({ ...answer, data: [{ ...service, name: { hidden: 'SECRET' } }] }) ?? '';
    expect(odd).not.toContain('SECRET');
    // The compiled serialiser answers what zod's parse answers (zod refuses the extra key of a strict object
    // such as `source` outright: a 500 instead of an answer without it).
    const zodAnswer = { ...answer, data: [{ ...service, source, secretColumn: 'SECRET' }] };
    expect(JSON.parse(write?.(zodAnswer) ?? '')).toEqual(operations.listHttpServices.response.schema.parse(zodAnswer));
    const nodes = compileResponseSerializer(operations.listNodes.response.schema)?.({
      data: [leakyNode],
      page: 1,
      limit: 10,
      total: 1,
    });
    expect(JSON.parse(nodes ?? '')).toEqual(
      operations.listNodes.response.schema.parse({ data: [leakyNode], page: 1, limit: 10, total: 1 }),
    );
  });

  it('a schema it cannot write as zod would keep it falls back to zod, which drops unknown keys too', () => {
    const union = z.object({
      item: z.union([z.object({ kind: z.literal('a'), a: z.string() }), z.object({ kind: z.literal('b') })]),
    });
    expect(compileResponseSerializer(union)).toBeUndefined();
    const open = z.object({ labels: z.record(z.string(), z.string()) });
    expect(compileResponseSerializer(open)).toBeUndefined();
    const written = responseSerializer(union)({ item: { kind: 'a', a: 'x', secret: 'SECRET' }, other: 'SECRET' });
    expect(JSON.parse(written)).toEqual({ item: { kind: 'a', a: 'x' } });
  });

  it('a route answers no column its schema does not name', async () => {
    // Through a real route: a handler that returns its rows with columns the schema does not name.
    const app = Fastify({ logger: false });
    useZodCompilers(app);
    registerOperation(app, operations.listNodes, () => ({ data: [leakyNode], page: 1, limit: 10, total: 1 }));
    const response = await app.inject({ url: '/api/nodes' });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('SECRET');
    const allowed = new Set(
      keysDeep(operations.listNodes.response.schema.parse({ data: [node], page: 1, limit: 10, total: 1 })),
    );
    expect(keysDeep(response.json()).filter((key) => !allowed.has(key))).toEqual([]);
    await app.close();
  });
});
