import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
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

  registerOperation(app, operations.listDomains, (request) => listDomains(deps, request.query));
  registerOperation(app, operations.getDomain, (request) => getDomain(deps, request.params.id));
  registerOperation(app, operations.createDomain, (request) => createDomain(deps, request.body, options));
  registerOperation(app, operations.updateDomain, (request) =>
    updateDomain(deps, request.params.id, request.body, options),
  );
  registerOperation(app, operations.deleteDomain, (request) => deleteDomain(deps, request.params.id));
}
