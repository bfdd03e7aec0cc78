import { eq, sql } from 'drizzle-orm';
import { isWildcardDomainName, ruleMessages, wildcardOf } from '@postern/contract';
import type { Config } from '../../env.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import { assertNotConsoleHost, insertMissingDomain } from '../domains/service.js';
import type { Caller } from './caller.js';
import type { Tx } from '../../db/client.js';
import { assertNodeQuota } from './node-quotas.js';
import { preparedPerDb } from '../../db/prepared.js';

/**
 * An account limited to some nodes (docs/api.md "Node scope") publishes only on a domain that no node outside its
 * scope owns (the name's own, or the wildcard covering it) and no such node's service uses: a path it added there
 * would take part of another node's traffic. The refusal tells nothing of the other node.
 */
async function assertNoOtherNodes(
  tx: Tx,
  nodeScope: readonly number[],
  domain: string,
  row: { ownerNodeId: number | null } | undefined,
): Promise<void> {
  const outside = (nodeId: number | null) => nodeId !== null && !nodeScope.includes(nodeId);
  if (outside(row?.ownerNodeId ?? null)) throw fieldError('domain', ruleMessages.domainOfOtherNodes);
  for (const table of [httpServices, tcpServices]) {
    const users = await tx.selectDistinct({ nodeId: table.nodeId }).from(table).where(eq(table.domain, domain)).all();
    if (users.some((user) => outside(user.nodeId))) throw fieldError('domain', ruleMessages.domainOfOtherNodes);
  }
}

// Every change of a service with a domain asks this: prepared once per connection (db/prepared.ts).
const domainOwnerQuery = preparedPerDb((tx: Tx) =>
  tx
    .select({ ownerNodeId: domains.ownerNodeId })
    .from(domains)
    .where(eq(domains.domain, sql.placeholder('name')))
    .prepare(),
);

/**
 * Makes `domain` ('' = none) usable by a service of `nodeId`, inside the caller's transaction. Nobody may use the
 * console's host name. The admin may use any domain; a name that does not exist yet becomes the admin's. A node's
 * token may use only the domains assigned to its node; a name that does not exist yet becomes the node's (within
 * its domain quota). A name below a wildcard domain without a domain of its own belongs to the wildcard's owner; a
 * token never creates a wildcard. The refusal is the same whoever owns the domain, so it tells nothing about the owner.
 */
export async function claimServiceDomain(
  tx: Tx,
  config: Pick<Config, 'publicHost' | 'nodeQuotas'>,
  caller: Caller,
  nodeId: number,
  domain: string,
  /** A web service is served under a wildcard covering its name; a TCP one terminates TLS with its own name's file. */
  kind: 'http' | 'tcp' = 'http',
  /** The console account's node scope (null: every node): a limited one uses no domain of another node. */
  nodeScope: readonly number[] | null = null,
): Promise<void> {
  if (domain === '') return;
  assertNotConsoleHost(config, domain);
  const ownerOf = async (name: string) => await domainOwnerQuery(tx).get({ name });
  const existing = await ownerOf(domain);
  // A name below a wildcard domain, with no domain of its own, is the wildcard's: served with its certificate, and
  // its owner's (docs/api.md "Certificates").
  const wildcard = existing ? null : wildcardOf(domain);
  const covering = wildcard === null ? undefined : await ownerOf(wildcard);
  if (caller === 'admin') {
    if (nodeScope !== null) await assertNoOtherNodes(tx, nodeScope, domain, existing ?? covering);
    // Read above, in this transaction: a name that exists needs nothing more, a missing one only its row.
    if (existing === undefined && (covering === undefined || kind === 'tcp')) await insertMissingDomain(tx, domain);
    return;
  }
  if (existing || covering) {
    if ((existing ?? covering)?.ownerNodeId !== nodeId) throw fieldError('domain', ruleMessages.domainNotYours);
    if (existing === undefined && kind === 'tcp') await insertMissingDomain(tx, domain, nodeId);
    return;
  }
  // A wildcard covers names other owners may hold or claim later: only the admin creates one (and may assign it).
  if (isWildcardDomainName(domain)) throw fieldError('domain', ruleMessages.domainNotYours);
  await assertNodeQuota(tx, config, nodeId, 'domains');
  await insertMissingDomain(tx, domain, nodeId);
}
