import type { FastifyInstance, FastifyRequest } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import { listServiceOverview, type HealthSource } from './overview.js';
import {
  createHttpService,
  createTcpService,
  deleteService,
  findServices,
  getService,
  listNodeServices,
  listServices,
  setServiceEnabled,
  updateHttpService,
  updateTcpService,
} from './service.js';

/** The node scope of the account making a change (services/caller.ts ChangeView). */
const changeViewOf = (request: FastifyRequest) => ({ nodeScope: requireSession(request).nodeScope });

/** `health`: the backends' health (the observer's checker), for the overview's `status=backend-down`. */
export async function serviceRoutes(
  app: FastifyInstance,
  opts: { deps: AppDeps; health: HealthSource },
): Promise<void> {
  const { deps, health } = opts;

  registerOperation(
    app,
    operations.listServiceOverview,
    async (request) => await listServiceOverview(deps, request.query, health, requireSession(request).nodeScope),
  );

  registerOperation(
    app,
    operations.listHttpServices,
    async (request) => await listServices(deps, 'http', request.query, requireSession(request).nodeScope),
  );
  registerOperation(
    app,
    operations.listTcpServices,
    async (request) => await listServices(deps, 'tcp', request.query, requireSession(request).nodeScope),
  );
  registerOperation(
    app,
    operations.findServices,
    async (request) => await findServices(deps, request.query, requireSession(request).nodeScope),
  );
  registerOperation(
    app,
    operations.listNodeServices,
    async ({ params, query }) => await listNodeServices(deps, params.nodeId, params.type, query),
  );

  registerOperation(
    app,
    operations.createHttpService,
    async (request) =>
      await createHttpService(deps, request.params.nodeId, request.body, 'admin', changeViewOf(request)),
  );
  registerOperation(
    app,
    operations.createTcpService,
    async (request) =>
      await createTcpService(deps, request.params.nodeId, request.body, 'admin', changeViewOf(request)),
  );

  registerOperation(
    app,
    operations.getService,
    async ({ params }) => await getService(deps, params.nodeId, params.type, params.id),
  );
  registerOperation(
    app,
    operations.updateHttpService,
    async (request) =>
      await updateHttpService(deps, request.params.nodeId, request.params.id, request.body, changeViewOf(request)),
  );
  registerOperation(
    app,
    operations.updateTcpService,
    async (request) =>
      await updateTcpService(deps, request.params.nodeId, request.params.id, request.body, changeViewOf(request)),
  );

  registerOperation(
    app,
    operations.enableService,
    async ({ params }) => await setServiceEnabled(deps, params.nodeId, params.type, params.id, true, 'admin'),
  );
  registerOperation(
    app,
    operations.disableService,
    async ({ params }) => await setServiceEnabled(deps, params.nodeId, params.type, params.id, false, 'admin'),
  );
  registerOperation(
    app,
    operations.deleteService,
    async ({ params }) => await deleteService(deps, params.nodeId, params.type, params.id, 'admin'),
  );
}
