import { and, asc, eq } from 'drizzle-orm';
import { gatewayAddress } from '../../dataplane/wireguard/addresses.js';
import type { AppDeps } from '../../deps.js';
import { gateways, httpServices, nodes } from '../../db/schema.js';
import { findLocalNode } from './repository.js';

export const LOCAL_NODE_NAME = 'Gateway (local)';

/**
 * First boot: the gateway's own node, with the subnet's first host address and the first gateway's public key (the
 * first gateway registered has that address, modules/gateways). One row for every gateway of the database: its
 * services are served by each gateway from that gateway's host (backendHost, not a tunnel address), so it stands for
 * "the gateways themselves". Its private key lives (encrypted) in the `gateways` row, so this row holds none.
 * Created before any other node, so it has the lowest id and lists first.
 */
export async function ensureLocalNode(deps: AppDeps): Promise<void> {
  const existing = await findLocalNode(deps);
  if (existing) {
    await removeLegacyConsoleService(deps, existing.id);
    return;
  }
  const at = deps.now().toISOString();
  // Checked again inside the write: gateways sharing one PostgreSQL may boot together on an empty database, and
  // writes are serialised (one lock), so exactly one of them creates the row.
  await deps.db.write(async (tx) => {
    const created = await tx.select({ id: nodes.id }).from(nodes).where(eq(nodes.isLocal, true)).get();
    if (created) return;
    const first = await tx
      .select({ publicKey: gateways.publicKey })
      .from(gateways)
      .orderBy(asc(gateways.id))
      .limit(1)
      .get();
    await tx
      .insert(nodes)
      .values({
        name: LOCAL_NODE_NAME,
        address: gatewayAddress(deps.config.vpnSubnet),
        isLocal: true,
        publicKey: first?.publicKey ?? deps.gateway.publicKey,
        privateKeyEnc: '',
        presharedKeyEnc: null,
        createdAt: at,
        updatedAt: at,
      })
      .run();
  });
}

/** Name of the HTTP service that earlier versions created to publish the console on the default host. */
export const LEGACY_CONSOLE_SERVICE_NAME = 'Postern console';

/**
 * Earlier versions published the console as the local node's service `/` without a domain. nginx now serves the
 * console natively on POSTERN_PUBLIC_HOST and services without a domain on their own port, where this row would
 * put the console on a second origin: it goes (only that row, exactly as first boot created it).
 */
async function removeLegacyConsoleService(deps: AppDeps, localNodeId: number): Promise<void> {
  await deps.db.write(
    async (tx) =>
      await tx
        .delete(httpServices)
        .where(
          and(
            eq(httpServices.nodeId, localNodeId),
            eq(httpServices.name, LEGACY_CONSOLE_SERVICE_NAME),
            eq(httpServices.domain, ''),
            eq(httpServices.pathLocation, '/'),
            eq(httpServices.backendPort, deps.config.port),
          ),
        )
        .run(),
  );
}
