import { eq } from 'drizzle-orm';
import { ruleMessages } from '@postern/contract';
import type { Config } from '../../env.js';
import { domains } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import { assertNotConsoleHost, ensureDomains } from '../domains/service.js';
import type { Caller } from './caller.js';
import type { DbExecutor } from './db-executor.js';
import { assertNodeQuota } from './node-quotas.js';

/**
 * Makes `domain` ('' = none) usable by a service of `nodeId`, inside the caller's transaction. Nobody may use the
 * console's host name. The admin may use any domain; a name that does not exist yet becomes the admin's. A node's
 * token may use only the domains assigned to its node; a name that does not exist yet becomes the node's (within
 * its domain quota). The refusal is the same whoever owns the domain, so it tells nothing about the owner.
 */
export function claimServiceDomain(
  tx: DbExecutor,
  config: Pick<Config, 'publicHost' | 'nodeQuotas'>,
  caller: Caller,
  nodeId: number,
  domain: string,
): void {
  if (domain === '') return;
  assertNotConsoleHost(config, domain);
  if (caller === 'admin') {
    ensureDomains(tx, [domain]);
    return;
  }
  const existing = tx
    .select({ ownerNodeId: domains.ownerNodeId })
    .from(domains)
    .where(eq(domains.domain, domain))
    .get();
  if (existing) {
    if (existing.ownerNodeId !== nodeId) throw fieldError('domain', ruleMessages.domainNotYours);
    return;
  }
  assertNodeQuota(tx, config, nodeId, 'domains');
  ensureDomains(tx, [domain], nodeId);
}
