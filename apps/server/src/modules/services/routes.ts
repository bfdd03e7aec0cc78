import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
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

export async function serviceRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  registerOperation(app, operations.listHttpServices, (request) => listServices(deps, 'http', request.query));
  registerOperation(app, operations.listTcpServices, (request) => listServices(deps, 'tcp', request.query));
  registerOperation(app, operations.findServices, ({ query }) => findServices(deps, query));
  registerOperation(app, operations.listNodeServices, ({ params, query }) =>
    listNodeServices(deps, params.nodeId, params.type, query),
  );

  registerOperation(app, operations.createHttpService, ({ params, body }) =>
    createHttpService(deps, params.nodeId, body),
  );
  registerOperation(app, operations.createTcpService, ({ params, body }) =>
    createTcpService(deps, params.nodeId, body),
  );

  registerOperation(app, operations.getService, ({ params }) =>
    getService(deps, params.nodeId, params.type, params.id),
  );
  registerOperation(app, operations.updateHttpService, ({ params, body }) =>
    updateHttpService(deps, params.nodeId, params.id, body),
  );
  registerOperation(app, operations.updateTcpService, ({ params, body }) =>
    updateTcpService(deps, params.nodeId, params.id, body),
  );

  registerOperation(app, operations.enableService, ({ params }) =>
    setServiceEnabled(deps, params.nodeId, params.type, params.id, true),
  );
  registerOperation(app, operations.disableService, ({ params }) =>
    setServiceEnabled(deps, params.nodeId, params.type, params.id, false),
  );
  registerOperation(app, operations.deleteService, ({ params }) =>
    deleteService(deps, params.nodeId, params.type, params.id),
  );
}
