import { count, eq } from 'drizzle-orm';
import type { Config } from '../../env.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { badRequest } from '../../errors.js';
import type { Tx } from '../../db/client.js';

// What one node's token may create (POSTERN_NODE_MAX_*), so one tenant cannot exhaust what all share: the TCP/UDP
// port range, the services and certificates the gateway serves. Counted over everything the node has, also what
// the admin created for it; only a token's creations are refused (the admin is not bound). Checked inside the
// caller's immediate transaction, so concurrent creations cannot overshoot.

export type QuotaKind = keyof Config['nodeQuotas'];

const quotaTexts: Record<QuotaKind, { what: string; setting: string; hint: string }> = {
  services: { what: 'services', setting: 'POSTERN_NODE_MAX_SERVICES', hint: 'delete one of its services first' },
  ports: {
    what: 'public TCP/UDP ports',
    setting: 'POSTERN_NODE_MAX_PORTS',
    hint: 'delete one of its TCP/UDP services first',
  },
  domains: { what: 'domains', setting: 'POSTERN_NODE_MAX_DOMAINS', hint: 'publish on one of its domains' },
};

async function countOf(tx: Tx, nodeId: number, kind: QuotaKind): Promise<number> {
  const tcp = async () =>
    (await tx.select({ n: count() }).from(tcpServices).where(eq(tcpServices.nodeId, nodeId)).get())?.n ?? 0;
  if (kind === 'ports') return await tcp();
  if (kind === 'domains')
    return (await tx.select({ n: count() }).from(domains).where(eq(domains.ownerNodeId, nodeId)).get())?.n ?? 0;
  return (
    (await tcp()) +
    ((await tx.select({ n: count() }).from(httpServices).where(eq(httpServices.nodeId, nodeId)).get())?.n ?? 0)
  );
}

/** 400 when the node already has as many of `kind` as its quota allows. */
export async function assertNodeQuota(
  tx: Tx,
  config: Pick<Config, 'nodeQuotas'>,
  nodeId: number,
  kind: QuotaKind,
): Promise<void> {
  const limit = config.nodeQuotas[kind];
  if ((await countOf(tx, nodeId, kind)) < limit) return;
  const { what, setting, hint } = quotaTexts[kind];
  throw badRequest(`This node has reached its limit of ${limit} ${what} (${setting} on the gateway): ${hint}`);
}
