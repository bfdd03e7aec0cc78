import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { EmptyResponse, JsonResponse, Operation } from '@postern/contract';
import type { z } from 'zod';

// The one way an API route is registered: from its operation in the contract's table. The operation's schemas
// validate the request (zod-provider.ts), type the handler and serialise the answer; its auth kind is what the
// global gate (authenticate.ts) reads. A route module is then a list of `operation + handler` pairs.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract operation this route serves (every /api route has one). */
    operation?: Operation;
  }
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

/** The request as the operation's schemas leave it: params, query and body parsed. */
export type OperationRequest<O extends Operation> = FastifyRequest<{
  Params: Parsed<O extends { params: infer P } ? P : undefined>;
  Querystring: Parsed<O extends { query: infer Q } ? Q : undefined>;
  Body: Parsed<O extends { body: infer B } ? B : undefined>;
}>;

/**
 * What a handler gives back: the JSON answer (serialised through the schema, so unknown keys are dropped), nothing
 * for a 204; file and event-stream handlers answer through `reply` themselves.
 */
export type OperationResult<O extends Operation> =
  O['response'] extends JsonResponse<infer S>
    ? z.input<S>
    : O['response'] extends EmptyResponse
      ? // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a 204 handler may simply not return
        void
      : unknown;

export type OperationHandler<O extends Operation> = (
  request: OperationRequest<O>,
  reply: FastifyReply,
) => OperationResult<O> | Promise<OperationResult<O>>;

export interface OperationOptions {
  /** Refuse larger bodies with 413 from their Content-Length, before reading them. */
  bodyLimit?: number;
  /** A body schema built at run time in place of the operation's (same shape; e.g. with the injected clock). */
  body?: z.ZodType;
}

export function registerOperation<O extends Operation>(
  app: FastifyInstance,
  operation: O,
  handler: OperationHandler<O>,
  options: OperationOptions = {},
): void {
  const { response } = operation;
  const body = options.body ?? operation.body;
  const schema: FastifySchema = {
    ...(operation.params ? { params: operation.params } : {}),
    ...(operation.query ? { querystring: operation.query } : {}),
    ...(body ? { body } : {}),
    ...(response.kind === 'json' ? { response: { [response.status]: response.schema } } : {}),
  };
  app.route({
    method: operation.method,
    url: operation.path,
    schema,
    config: { operation },
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    handler: async (request, reply) => {
      const result = await handler(request as OperationRequest<O>, reply);
      if (response.kind === 'json') return reply.code(response.status).send(result);
      if (response.kind === 'empty') return reply.code(204).send();
      return result;
    },
  });
}

/** The operation of the route a request matched; undefined for unknown paths and the console's files. */
export function operationOf(request: FastifyRequest): Operation | undefined {
  return request.routeOptions.config.operation;
}
