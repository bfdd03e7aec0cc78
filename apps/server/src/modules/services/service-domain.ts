import { eq } from 'drizzle-orm';
import { ruleMessages } from '@postern/contract';
import type { Config } from '../../env.js';
import { domains } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import { assertNotConsoleHost, ensureDomains } from '../domains/service.js';
import type { Caller } from './caller.js';
import type { Db } from '../../db/client.js';
import { assertNodeQuota } from './node-quotas.js';

/**
 * Makes `domain` ('' = none) usable by a service of `nodeId`, inside the caller's transaction. Nobody may use the
 * console's host name. The admin may use any domain; a name that does not exist yet becomes the admin's. A node's
 * token may use only the domains assigned to its node; a name that does not exist yet becomes the node's (within
 * its domain quota). The refusal is the same whoever owns the domain, so it tells nothing about the owner.
 */
export async function claimServiceDomain(
  tx: Db,
  config: Pick<Config, 'publicHost' | 'nodeQuotas'>,
  caller: Caller,
  nodeId: number,
  domain: string,
): Promise<void> {
  if (domain === '') return;
  assertNotConsoleHost(config, domain);
  if (caller === 'admin') {
    await ensureDomains(tx, [domain]);
    return;
  }
  const existing = await tx
    .select({ ownerNodeId: domains.ownerNodeId })
    .from(domains)
    .where(eq(domains.domain, domain))
    .get();
  if (existing) {
    if (existing.ownerNodeId !== nodeId) throw fieldError('domain', ruleMessages.domainNotYours);
    return;
  }
  await assertNodeQuota(tx, config, nodeId, 'domains');
  await ensureDomains(tx, [domain], nodeId);
}
