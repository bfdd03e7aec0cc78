import { routes } from '@postern/contract';
import { z } from 'zod';

// The OpenAPI document is generated from what is actually registered: every route's zod schemas (the
// contract's) become JSON Schema, and the contract's route table names the operations.

export interface RegisteredRoute {
  method: string;
  url: string;
  schema?: { body?: unknown; querystring?: unknown; params?: unknown; response?: Record<string | number, unknown> };
}

const operationIds = new Map(Object.entries(routes).map(([name, route]) => [`${route.method} ${route.path}`, name]));

function toJsonSchema(schema: unknown, io: 'input' | 'output'): Record<string, unknown> | undefined {
  if (!(schema instanceof z.ZodType)) return undefined;
  // Preprocess steps and refinements have no JSON Schema form: they are described as "any" instead of failing.
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' }) as Record<string, unknown>;
}

function parameters(schema: unknown, where: 'query' | 'path') {
  const json = toJsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  return Object.entries(json?.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json?.required ?? []).includes(name),
    schema: property,
  }));
}

const isPublic = (url: string) => url === routes.login.path || url === routes.health.path || url === routes.openapi.path;

function securityOf(url: string): Record<string, never[]>[] {
  if (isPublic(url)) return [];
  if (url === routes.session.path) return [{ sessionCookie: [] }];
  return url.startsWith('/api/agent/') ? [{ nodeToken: [] }] : [{ session: [] }];
}

export function buildOpenApiDocument(registered: RegisteredRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of registered) {
    if (!route.url.startsWith('/api/') || route.method === 'HEAD') continue;
    const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
    const responses = Object.fromEntries(
      Object.entries(route.schema?.response ?? {}).map(([status, schema]) => {
        const json = toJsonSchema(schema, 'output');
        return [status, { description: `HTTP ${status}`, ...(json ? { content: { 'application/json': { schema: json } } } : {}) }];
      }),
    );
    const body = toJsonSchema(route.schema?.body, 'input');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: operationIds.get(`${route.method} ${route.url}`) ?? `${route.method.toLowerCase()} ${route.url}`,
      parameters: [...parameters(route.schema?.params, 'path'), ...parameters(route.schema?.querystring, 'query')],
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
      responses: Object.keys(responses).length > 0 ? responses : { default: { description: 'See docs/api.md' } },
      security: securityOf(route.url),
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Postern API', version },
    components: {
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'Session token from POST /api/auth/login' },
        nodeToken: { type: 'http', scheme: 'bearer', description: "A node's personal access token (pstn_...)" },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'token', description: 'HttpOnly cookie set by POST /api/auth/login' },
      },
    },
    paths,
  };
}
