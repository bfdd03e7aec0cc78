import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import type { NodeEvents } from '../../http/events.js';
import { registerOperation } from '../../http/operation.js';
import { openSse } from '../../sse.js';
import {
  assertNodeExists,
  createNode,
  deleteNode,
  getNode,
  getNodeConfigFile,
  listNodes,
  setNodeEnabled,
  updateNode,
} from './service.js';
import { createNodeStreamHub } from './stream-hub.js';
import { labelProblemsOf } from './label-problems.js';

export async function nodeRoutes(app: FastifyInstance, opts: { deps: AppDeps; events: NodeEvents }): Promise<void> {
  const { deps, events } = opts;
  const ctx = { deps, events };
  const hub = createNodeStreamHub(deps, events, app.log);
  app.addHook('onClose', async () => hub.close());

  registerOperation(
    app,
    operations.listNodes,
    async (request) => await listNodes(deps, request.query, requireSession(request).nodeScope),
  );
  registerOperation(app, operations.createNode, async (request) => await createNode(ctx, request.body));

  registerOperation(app, operations.nodeStream, async (request, reply) => {
    const { id, page, limit, type, format, q, sort, order } = request.query;
    // Answer 404 before switching to an event stream, so a wrong id is an error the client can see.
    if (id !== undefined) await assertNodeExists(deps, id);
    const conn = openSse(request, reply);
    if (id !== undefined) hub.addDetailClient(conn, id);
    else hub.addListClient(conn, { page, limit, type, q, sort, order }, format, requireSession(request).nodeScope);
  });

  registerOperation(app, operations.getNode, async (request) => await getNode(deps, request.params.id));
  registerOperation(
    app,
    operations.getNodeLabelProblems,
    async (request) => await labelProblemsOf(deps, request.params.id),
  );
  registerOperation(
    app,
    operations.updateNode,
    async (request) => await updateNode(ctx, request.params.id, request.body),
  );
  registerOperation(app, operations.deleteNode, async (request) => await deleteNode(ctx, request.params.id));
  registerOperation(app, operations.enableNode, async (request) => await setNodeEnabled(ctx, request.params.id, true));
  registerOperation(
    app,
    operations.disableNode,
    async (request) => await setNodeEnabled(ctx, request.params.id, false),
  );

  registerOperation(app, operations.downloadNodeConfig, async (request, reply) => {
    const { fileName, config } = await getNodeConfigFile(deps, request.params.id);
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('content-disposition', `attachment; filename="${fileName}"`)
      .header('cache-control', 'no-store')
      .send(config);
  });
}
