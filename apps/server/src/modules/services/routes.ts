import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  HttpServiceCreateSchema,
  HttpServiceSchema,
  HttpServiceUpdateSchema,
  idValue,
  listOf,
  PageQuerySchema,
  routes,
  ServiceListQuerySchema,
  ServiceTypeSchema,
  TcpServiceCreateSchema,
  TcpServiceSchema,
  TcpServiceUpdateSchema,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import {
  createHttpService,
  createTcpService,
  deleteService,
  getService,
  listNodeServices,
  listServices,
  setServiceEnabled,
  updateHttpService,
  updateTcpService,
} from './service.js';

// A malformed id or an unknown type in the path names no resource: the error handler answers 404 for params.
const idText = idValue();
const NodeParams = z.object({ nodeId: idText });
const NodeTypeParams = NodeParams.extend({ type: ServiceTypeSchema });
const ServiceParams = NodeTypeParams.extend({ id: idText });
const NodeServiceParams = NodeParams.extend({ id: idText });

const AnyServiceSchema = z.union([HttpServiceSchema, TcpServiceSchema]);
const noContent = { 204: z.null() };

export async function serviceRoutes(fastify: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  app.get(
    routes.listHttpServices.path,
    { schema: { querystring: ServiceListQuerySchema, response: { 200: listOf(HttpServiceSchema) } } },
    (request) => listServices(deps, 'http', request.query),
  );
  app.get(
    routes.listTcpServices.path,
    { schema: { querystring: ServiceListQuerySchema, response: { 200: listOf(TcpServiceSchema) } } },
    (request) => listServices(deps, 'tcp', request.query),
  );
  app.get(
    routes.listNodeServices.path,
    { schema: { params: NodeTypeParams, querystring: PageQuerySchema, response: { 200: listOf(AnyServiceSchema) } } },
    (request) => listNodeServices(deps, request.params.nodeId, request.params.type, request.query),
  );

  app.post(
    routes.createHttpService.path,
    { schema: { params: NodeParams, body: HttpServiceCreateSchema, response: { 201: HttpServiceSchema } } },
    async (request, reply) => reply.code(201).send(await createHttpService(deps, request.params.nodeId, request.body)),
  );
  app.post(
    routes.createTcpService.path,
    { schema: { params: NodeParams, body: TcpServiceCreateSchema, response: { 201: TcpServiceSchema } } },
    async (request, reply) => reply.code(201).send(await createTcpService(deps, request.params.nodeId, request.body)),
  );

  app.get(routes.getService.path, { schema: { params: ServiceParams, response: { 200: AnyServiceSchema } } }, (request) =>
    getService(deps, request.params.nodeId, request.params.type, request.params.id),
  );

  // The edit body depends on the type, so each type has its own route (static segments win over `:type`).
  app.patch(
    '/api/services/:nodeId/http/:id',
    { schema: { params: NodeServiceParams, body: HttpServiceUpdateSchema, response: { 200: HttpServiceSchema } } },
    (request) => updateHttpService(deps, request.params.nodeId, request.params.id, request.body),
  );
  app.patch(
    '/api/services/:nodeId/tcp/:id',
    { schema: { params: NodeServiceParams, body: TcpServiceUpdateSchema, response: { 200: TcpServiceSchema } } },
    (request) => updateTcpService(deps, request.params.nodeId, request.params.id, request.body),
  );

  app.patch(routes.enableService.path, { schema: { params: ServiceParams, response: { 200: AnyServiceSchema } } }, (request) =>
    setServiceEnabled(deps, request.params.nodeId, request.params.type, request.params.id, true),
  );
  app.patch(routes.disableService.path, { schema: { params: ServiceParams, response: { 200: AnyServiceSchema } } }, (request) =>
    setServiceEnabled(deps, request.params.nodeId, request.params.type, request.params.id, false),
  );

  app.delete(routes.deleteService.path, { schema: { params: ServiceParams, response: noContent } }, async (request, reply) => {
    await deleteService(deps, request.params.nodeId, request.params.type, request.params.id);
    return reply.code(204).send(null);
  });
}
