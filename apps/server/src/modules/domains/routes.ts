import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import {
  acceptEveryDomain,
  createDomain,
  deleteDomain,
  getDomain,
  listDomains,
  updateDomain,
  type DomainCheck,
} from './service.js';

export interface DomainRoutesOptions {
  deps: AppDeps;
  /** Checks that a certbot domain points at this gateway; defaults to accepting every domain. */
  checkDomain?: DomainCheck;
}

export async function domainRoutes(app: FastifyInstance, opts: DomainRoutesOptions): Promise<void> {
  const { deps } = opts;
  const options = { checkDomain: opts.checkDomain ?? acceptEveryDomain };

  registerOperation(
    app,
    operations.listDomains,
    async (request) => await listDomains(deps, request.query, requireSession(request).nodeScope),
  );
  registerOperation(
    app,
    operations.getDomain,
    async (request) => await getDomain(deps, request.params.id, requireSession(request).nodeScope),
  );
  registerOperation(app, operations.createDomain, async (request) => await createDomain(deps, request.body, options));
  registerOperation(
    app,
    operations.updateDomain,
    async (request) => await updateDomain(deps, request.params.id, request.body, options),
  );
  registerOperation(app, operations.deleteDomain, async (request) => await deleteDomain(deps, request.params.id));
}
