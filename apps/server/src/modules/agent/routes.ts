import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  AgentConfigSchema,
  HttpServiceCreateSchema,
  HttpServiceSchema,
  IdParamSchema,
  listOf,
  NodeSchema,
  PageQuerySchema,
  routes,
  ServiceTypeSchema,
  TcpServiceCreateSchema,
  TcpServiceSchema,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { renderConfigFor } from '../nodes/node-config.js';
import { viewNode } from '../nodes/service.js';
import { createHttpService, createTcpService, deleteService, listNodeServices, setServiceEnabled } from '../services/service.js';
import { authenticateAgent, requireAgentNode } from './authenticate-agent.js';
import { tunnelHealthUrl } from './tunnel-health.js';

// The API the `postern` CLI calls with a node's access token. Every call is scoped to that node: the node id
// comes from the token, never from the request, so one node can never touch another's services.

const TypeParamsSchema = z.object({ type: ServiceTypeSchema });
const ServiceParamsSchema = IdParamSchema.extend({ type: ServiceTypeSchema });
const AnyServiceSchema = z.union([HttpServiceSchema, TcpServiceSchema]);

export async function agentRoutes(fastify: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.decorateRequest('agentNode', null);
  app.addHook('onRequest', (request) => authenticateAgent(deps, request));

  app.get(routes.agentNode.path, { schema: { response: { 200: NodeSchema } } }, (request) => viewNode(deps, requireAgentNode(request)));

  app.get(routes.agentConfig.path, { schema: { response: { 200: AgentConfigSchema } } }, (request) => {
    const node = requireAgentNode(request);
    return { node: viewNode(deps, node), config: renderConfigFor(deps, node), tunnelHealthUrl: tunnelHealthUrl(deps.config) };
  });

  app.get(routes.agentListServices.path, { schema: { params: TypeParamsSchema, querystring: PageQuerySchema, response: { 200: listOf(AnyServiceSchema) } } }, (request) =>
    listNodeServices(deps, requireAgentNode(request).id, request.params.type, request.query),
  );

  app.post(routes.agentCreateHttpService.path, { schema: { body: HttpServiceCreateSchema, response: { 201: HttpServiceSchema } } }, async (request, reply) =>
    reply.code(201).send(await createHttpService(deps, requireAgentNode(request).id, request.body)),
  );

  app.post(routes.agentCreateTcpService.path, { schema: { body: TcpServiceCreateSchema, response: { 201: TcpServiceSchema } } }, async (request, reply) =>
    reply.code(201).send(await createTcpService(deps, requireAgentNode(request).id, request.body)),
  );

  app.patch(routes.agentEnableService.path, { schema: { params: ServiceParamsSchema, response: { 200: AnyServiceSchema } } }, (request) =>
    setServiceEnabled(deps, requireAgentNode(request).id, request.params.type, request.params.id, true),
  );

  app.patch(routes.agentDisableService.path, { schema: { params: ServiceParamsSchema, response: { 200: AnyServiceSchema } } }, (request) =>
    setServiceEnabled(deps, requireAgentNode(request).id, request.params.type, request.params.id, false),
  );

  app.delete(routes.agentDeleteService.path, { schema: { params: ServiceParamsSchema } }, async (request, reply) => {
    await deleteService(deps, requireAgentNode(request).id, request.params.type, request.params.id);
    return reply.code(204).send();
  });
}
