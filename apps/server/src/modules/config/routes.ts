import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import type { NodeEvents } from '../../http/events.js';
import { registerOperation } from '../../http/operation.js';
import { acceptEveryDomain, type DomainCheck } from '../domains/service.js';
import { applyConfigDocument, exportConfig, operatorOf, planConfigDocument } from './service.js';

export interface ConfigRoutesOptions {
  deps: AppDeps;
  events: NodeEvents;
  /** The certbot domain check the domain routes use. */
  checkDomain?: DomainCheck;
}

export async function configRoutes(app: FastifyInstance, opts: ConfigRoutesOptions): Promise<void> {
  const { deps, events } = opts;
  const domainOptions = { checkDomain: opts.checkDomain ?? acceptEveryDomain };
  registerOperation(app, operations.exportConfig, async () => await exportConfig(deps));
  registerOperation(
    app,
    operations.planConfig,
    async (request) => await planConfigDocument(deps, request.body.document, request.body.prune),
  );
  registerOperation(app, operations.applyConfig, async (request) => {
    const session = requireSession(request);
    const actor = { ...(await operatorOf(deps, session.userId)), accountId: session.userId, via: session.via };
    return await applyConfigDocument(
      { deps, events, domainOptions, actor, caller: session, address: request.ip },
      request.body.document,
      request.body.prune,
    );
  });
}
