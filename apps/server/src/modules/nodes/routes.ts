import type { FastifyInstance } from 'fastify';
import {
  IdParamSchema,
  listOf,
  NodeCreatedSchema,
  NodeCreateSchema,
  NodeListQuerySchema,
  NodeSchema,
  NodeStreamQuerySchema,
  NodeUpdateSchema,
  routes,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { NodeEvents } from '../../http/events.js';
import type { ZodTypeProvider } from '../../http/zod-provider.js';
import { openSse } from '../../sse.js';
import { configFileName, renderConfigFor } from './node-config.js';
import { getNodeRow } from './repository.js';
import { createNode, deleteNode, getNode, listNodes, setNodeEnabled, updateNode } from './service.js';
import { createNodeStreamHub } from './stream-hub.js';

/** The session token arrives as `?token=` and is checked by the global gate; it is not a filter. */
const StreamQuerySchema = NodeStreamQuerySchema.omit({ token: true });

export async function nodeRoutes(fastify: FastifyInstance, opts: { deps: AppDeps; events: NodeEvents }): Promise<void> {
  const { deps, events } = opts;
  const ctx = { deps, events };
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const hub = createNodeStreamHub(deps, events, app.log);
  app.addHook('onClose', async () => hub.close());

  app.get(routes.listNodes.path, { schema: { querystring: NodeListQuerySchema, response: { 200: listOf(NodeSchema) } } }, (request) =>
    listNodes(deps, request.query),
  );

  app.post(routes.createNode.path, { schema: { body: NodeCreateSchema, response: { 201: NodeCreatedSchema } } }, async (request, reply) =>
    reply.code(201).send(await createNode(ctx, request.body)),
  );

  app.get(routes.nodeStream.path, { schema: { querystring: StreamQuerySchema } }, (request, reply) => {
    const { id, page, limit, type } = request.query;
    // Answer 404 before switching to an event stream, so a wrong id is an error the client can see.
    if (id !== undefined) getNodeRow(deps, id);
    const conn = openSse(request, reply);
    if (id !== undefined) hub.addDetailClient(conn, id);
    else hub.addListClient(conn, { page, limit, type });
  });

  app.get(routes.getNode.path, { schema: { params: IdParamSchema, response: { 200: NodeSchema } } }, (request) =>
    getNode(deps, request.params.id),
  );

  app.patch(routes.updateNode.path, { schema: { params: IdParamSchema, body: NodeUpdateSchema, response: { 200: NodeSchema } } }, (request) =>
    updateNode(ctx, request.params.id, request.body),
  );

  app.delete(routes.deleteNode.path, { schema: { params: IdParamSchema } }, async (request, reply) => {
    await deleteNode(ctx, request.params.id);
    return reply.code(204).send();
  });

  app.patch(routes.enableNode.path, { schema: { params: IdParamSchema, response: { 200: NodeSchema } } }, (request) =>
    setNodeEnabled(ctx, request.params.id, true),
  );

  app.patch(routes.disableNode.path, { schema: { params: IdParamSchema, response: { 200: NodeSchema } } }, (request) =>
    setNodeEnabled(ctx, request.params.id, false),
  );

  // Plain text (a wg-quick file), so no JSON response schema.
  app.get(routes.downloadNodeConfig.path, { schema: { params: IdParamSchema } }, async (request, reply) => {
    const row = getNodeRow(deps, request.params.id);
    const config = renderConfigFor(deps, row);
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('content-disposition', `attachment; filename="${configFileName(row)}"`)
      .header('cache-control', 'no-store')
      .send(config);
  });
}
