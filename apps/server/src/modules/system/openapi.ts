import {
  errorStatus,
  MessageErrorSchema,
  operations,
  ValidationErrorSchema,
  type ErrorCode,
  type Operation,
} from '@postern/contract';
import { z } from 'zod';

// The OpenAPI document is generated from the contract's operation table, the same objects the routes are
// registered from (app.ts refuses an /api route that is not one), so it describes exactly what is served.

type JsonSchema = Record<string, unknown>;

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // Preprocess steps and refinements have no JSON Schema form: they are described as "any" instead of failing.
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });
}

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const json = toJsonSchema(schema, 'input') as { properties?: JsonSchema; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}

const jsonContent = (schema: z.ZodType) => ({ 'application/json': { schema: toJsonSchema(schema, 'output') } });

function successResponse(operation: Operation): Record<number, unknown> {
  const { response } = operation;
  switch (response.kind) {
    case 'json':
      return { [response.status]: { description: `HTTP ${response.status}`, content: jsonContent(response.schema) } };
    case 'empty':
      return { 204: { description: 'No content' } };
    case 'file':
      return {
        200: {
          description: 'A file (Content-Disposition names it)',
          content: { [response.mediaType]: { schema: { type: 'string' } } },
        },
      };
    case 'events':
      return {
        200: {
          description: `Server-sent events; each event's data is JSON (x-events: the schema per event name, "message" for unnamed events)`,
          content: { 'text/event-stream': { schema: { type: 'string' } } },
          'x-events': Object.fromEntries(
            Object.entries(response.events).map(([name, schema]) => [name, toJsonSchema(schema, 'output')]),
          ),
        },
      };
  }
}

/** One response per error status; its description lists the codes sent with it. */
function errorResponses(codes: readonly ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal' as const])
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: `code: ${list.join(' | ')}`,
        content: jsonContent(status === 422 ? ValidationErrorSchema : MessageErrorSchema),
      },
    ]),
  );
}

function securityOf(operation: Operation): Record<string, never[]>[] {
  switch (operation.auth) {
    case 'public':
      return [];
    case 'cookie':
      return [{ sessionCookie: [] }];
    case 'node-token':
      return [{ nodeToken: [] }];
    case 'session':
      return operation.response.kind === 'events' ? [{ session: [] }, { sessionQuery: [] }] : [{ session: [] }];
  }
}

export function buildOpenApiDocument(version: string, table: Readonly<Record<string, Operation>> = operations) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of Object.values(table)) {
    const path = operation.path.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][operation.method.toLowerCase()] = {
      operationId: operation.name,
      summary: operation.summary,
      parameters: [...parameters(operation.params, 'path'), ...parameters(operation.query, 'query')],
      ...(operation.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: toJsonSchema(operation.body, 'input') } },
            },
          }
        : {}),
      responses: { ...successResponse(operation), ...errorResponses(operation.errors) },
      security: securityOf(operation),
    };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Postern API',
      version,
      description: 'Error codes and decisions the console spec leaves open: docs/api.md',
    },
    components: {
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'Session token from POST /api/auth/login' },
        sessionQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: 'The session token on event streams (EventSource sends no headers)',
        },
        nodeToken: { type: 'http', scheme: 'bearer', description: "A node's personal access token (pstn_...)" },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'token',
          description: 'HttpOnly cookie set by POST /api/auth/login',
        },
      },
    },
    paths,
  };
}
