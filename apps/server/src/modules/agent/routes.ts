import type { FastifyInstance } from 'fastify';
import { operations, type Node } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { sendError, type HandledError } from '../../http/error-handler.js';
import { registerOperation } from '../../http/operation.js';
import { renderConfigFor } from '../nodes/node-config.js';
import { setOwnGatewayNetworks, viewNode } from '../nodes/service.js';
import { reportLabelProblems } from '../nodes/label-problems.js';
import type { NodeEvents } from '../../http/events.js';
import {
  createHttpService,
  createTcpService,
  deleteService,
  listNodeServices,
  setServiceEnabled,
  type AnyService,
} from '../services/service.js';
import { authenticateAgent, requireAgentNode } from './authenticate-agent.js';
import { listLiveGateways } from '../gateways/registry.js';
import { tunnelHealthUrl } from './tunnel-health.js';
import { registerAgentAccessRoutes } from '../access/routes.js';

// The API the `postern` CLI calls with a node's access token. Every call is scoped to that node: the node id
// comes from the token, never from the request, so one node can never touch another's services. Creations run
// as the 'node' caller: only the node's own domains, within its quotas, and never against a decision of the operator
// (services/caller.ts). There is no way to edit a service, a domain or the node itself from here, except the subnets
// of a gateway node whose operator allowed it (nodes/gateway-network.ts).

/**
 * nginx's reason for refusing a generation can quote any part of the config, other tenants' included: a node's
 * token gets a fixed text, the operator the reason (in the console, as the service's applyError).
 */
export const NODE_APPLY_FAILED_MESSAGE =
  "The gateway could not apply this change; the gateway's operator sees the reason in the console";

function redactForNode<T extends AnyService | Node>(entity: T): T {
  return entity.applyError === null ? entity : { ...entity, applyError: NODE_APPLY_FAILED_MESSAGE };
}

/** The gateway is down as a whole: saved, applied once it is back (the reason is the operator's to see). */
export const NODE_APPLY_LATER_MESSAGE =
  'Saved; the gateway applies it once it is back (its operator sees why it is not now)';

function redactErrorForNode(error: HandledError): HandledError {
  if (!(error instanceof AppError)) return error;
  if (error.code === 'dataplane_rejected') return new AppError('dataplane_rejected', NODE_APPLY_FAILED_MESSAGE);
  if (error.code === 'dataplane_unavailable') return new AppError('dataplane_unavailable', NODE_APPLY_LATER_MESSAGE);
  return error;
}

export async function agentRoutes(app: FastifyInstance, opts: { deps: AppDeps; events: NodeEvents }): Promise<void> {
  const { deps, events } = opts;
  app.decorateRequest('agentNode', null);
  app.decorateRequest('agentToken', null);
  app.addHook('onRequest', async (request) => await authenticateAgent(deps, request));
  app.setErrorHandler((error: HandledError, request, reply) => sendError(redactErrorForNode(error), request, reply));

  registerOperation(app, operations.agentNode, (request) => redactForNode(viewNode(deps, requireAgentNode(request))));

  registerOperation(app, operations.agentConfig, async (request) => {
    const node = requireAgentNode(request);
    // One read of the live gateways for both, so the [Peer] sections and `gateways` always agree.
    const gateways = await listLiveGateways(deps.db, deps.gateway.id);
    const listed = gateways.map(({ name, publicKey, endpoint, address }) => ({
      name,
      publicKey,
      endpoint,
      address,
      tunnelHealthUrl: tunnelHealthUrl(deps.config, address),
    }));
    return {
      node: redactForNode(viewNode(deps, node)),
      config: await renderConfigFor(deps, node, gateways),
      gateways: listed,
      // The first gateway's, for CLIs from before several gateways (they probe one).
      tunnelHealthUrl: listed[0]?.tunnelHealthUrl ?? tunnelHealthUrl(deps.config, deps.gateway.address),
    };
  });

  registerOperation(app, operations.agentSetGatewayNetworks, async (request) =>
    redactForNode(
      await setOwnGatewayNetworks({ deps, events }, requireAgentNode(request).id, request.body.gatewayNetworks),
    ),
  );

  registerOperation(app, operations.agentReportLabelProblems, async (request) => {
    await reportLabelProblems(deps, requireAgentNode(request).id, request.body.problems);
  });

  registerOperation(app, operations.agentListServices, async (request) => {
    const list = await listNodeServices(deps, requireAgentNode(request).id, request.params.type, request.query);
    return { ...list, data: list.data.map(redactForNode) };
  });

  registerOperation(app, operations.agentCreateHttpService, async (request) =>
    redactForNode(await createHttpService(deps, requireAgentNode(request).id, request.body, 'node')),
  );
  registerOperation(app, operations.agentCreateTcpService, async (request) =>
    redactForNode(await createTcpService(deps, requireAgentNode(request).id, request.body, 'node')),
  );

  registerOperation(app, operations.agentEnableService, async (request) =>
    redactForNode(
      await setServiceEnabled(deps, requireAgentNode(request).id, request.params.type, request.params.id, true, 'node'),
    ),
  );
  registerOperation(app, operations.agentDisableService, async (request) =>
    redactForNode(
      await setServiceEnabled(
        deps,
        requireAgentNode(request).id,
        request.params.type,
        request.params.id,
        false,
        'node',
      ),
    ),
  );

  registerAgentAccessRoutes(app, deps);

  registerOperation(
    app,
    operations.agentDeleteService,
    async (request) =>
      await deleteService(deps, requireAgentNode(request).id, request.params.type, request.params.id, 'node'),
  );
}
