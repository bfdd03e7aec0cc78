import { and, asc, eq } from 'drizzle-orm';
import { cidrBounds, intToIpv4 } from '@postern/contract';
import type { ReadDb, Store } from '../../db/client.js';
import { decryptGatewayKey, findLegacyGatewayKey } from '../../db/gateway-key.js';
import { preparedPerDb } from '../../db/prepared.js';
import { gateways, nodes } from '../../db/schema.js';
import { gatewayAddress } from '../../dataplane/wireguard/addresses.js';
import { generateKeyPair, publicKeyFromPrivate } from '../../dataplane/wireguard/keys.js';
import type { Config } from '../../env.js';
import type { SecretBox } from '../../secrets.js';

// The gateway processes of one database (docs/SCALE-OUT.md). Each registers its row when it starts (by name, so a
// restart is the same gateway) and keeps `last_seen_at` fresh (heartbeat.ts). Every write here runs in `db.write`,
// which on PostgreSQL holds the advisory lock every write takes: registrations, node creations and address choices are
// serialised across all gateways, so two of them never take the same address.

/** This gateway as the rest of the app knows it (its private key stays in the database, read by the data plane). */
export interface GatewayIdentity {
  id: number;
  name: string;
  publicKey: string;
  /** Tunnel address inside the VPN subnet, without prefix. */
  address: string;
  /** `host:port` nodes dial. */
  endpoint: string;
}

/** A gateway is live while its heartbeat is this close to the newest heartbeat of any gateway. */
export const LIVE_WINDOW_MS = 60_000;

type RegistryDeps = { db: Store; secrets: SecretBox; config: Pick<Config, 'vpnSubnet'>; now: () => Date };

/** The addresses of nodes and gateways: the one space both allocate in. */
export async function listTunnelAddressesInUse(db: ReadDb): Promise<Set<string>> {
  const [nodeRows, gatewayRows] = [
    await db.select({ address: nodes.address }).from(nodes).all(),
    await db.select({ address: gateways.address }).from(gateways).all(),
  ];
  return new Set([...nodeRows, ...gatewayRows].map((row) => row.address));
}

/**
 * The highest free host address of the subnet (nodes are numbered from the bottom, so gateways added later leave
 * their numbering alone), skipping network and broadcast addresses.
 */
export function allocateGatewayAddress(vpnSubnet: string, used: ReadonlySet<string>): string {
  const [first, broadcast] = cidrBounds(vpnSubnet);
  for (let n = broadcast - 1; n > first; n--) {
    const ip = intToIpv4(n);
    if (!used.has(ip)) return ip;
  }
  throw new Error(`VPN subnet ${vpnSubnet} is full: no free tunnel address for another gateway`);
}

/**
 * A gateway new to the database: the first one takes the subnet's first host address (the address nodes were given
 * for the gateway before several existed) and adopts the legacy key if the database has one, so existing nodes keep
 * working unchanged; the others a fresh key and an address from the top of the subnet.
 */
async function newGatewayValues(deps: RegistryDeps, tx: ReadDb): Promise<{ privateKey: string; address: string }> {
  const isFirst = (await tx.select({ id: gateways.id }).from(gateways).limit(1).all()).length === 0;
  const used = await listTunnelAddressesInUse(tx);
  if (isFirst) {
    // The local node holds that address too: it stands for the gateways themselves (modules/nodes/local-node.ts).
    const first = gatewayAddress(deps.config.vpnSubnet);
    const takenByNode = await tx
      .select({ id: nodes.id })
      .from(nodes)
      .where(and(eq(nodes.address, first), eq(nodes.isLocal, false)))
      .get();
    return {
      privateKey: (await findLegacyGatewayKey(tx, deps.secrets)) ?? generateKeyPair().privateKey,
      address: takenByNode ? allocateGatewayAddress(deps.config.vpnSubnet, used) : first,
    };
  }
  return { privateKey: generateKeyPair().privateKey, address: allocateGatewayAddress(deps.config.vpnSubnet, used) };
}

/**
 * Registers this gateway (upsert by name): an existing row keeps its key and address and gets the current endpoint
 * and a fresh heartbeat. Fails when the row's key cannot be decrypted (another secret key wrote the database).
 */
export async function registerGateway(
  deps: RegistryDeps,
  wanted: { name: string; endpoint: string },
): Promise<GatewayIdentity> {
  const at = deps.now().toISOString();
  const row = await deps.db.write(async (tx) => {
    const existing = await tx.select().from(gateways).where(eq(gateways.name, wanted.name)).get();
    if (existing) {
      return await tx
        .update(gateways)
        .set({ endpoint: wanted.endpoint, lastSeenAt: at, updatedAt: at })
        .where(eq(gateways.id, existing.id))
        .returning()
        .get();
    }
    const { privateKey, address } = await newGatewayValues(deps, tx);
    return await tx
      .insert(gateways)
      .values({
        name: wanted.name,
        publicKey: publicKeyFromPrivate(privateKey),
        privateKeyEnc: deps.secrets.encrypt(privateKey),
        address,
        endpoint: wanted.endpoint,
        lastSeenAt: at,
        createdAt: at,
        updatedAt: at,
      })
      .returning()
      .get();
  });
  // Read back once at boot: a database written under another secret key stops this gateway here, with the reason.
  decryptGatewayKey(deps.secrets, row.privateKeyEnc);
  return { id: row.id, name: row.name, publicKey: row.publicKey, address: row.address, endpoint: row.endpoint };
}

/** One heartbeat: this gateway is alive now. */
export async function touchGateway(deps: Pick<RegistryDeps, 'db' | 'now'>, gatewayId: number): Promise<void> {
  await deps.db.write(
    async (tx) =>
      await tx.update(gateways).set({ lastSeenAt: deps.now().toISOString() }).where(eq(gateways.id, gatewayId)).run(),
  );
}

const queriesFor = preparedPerDb((db: ReadDb) => ({
  all: db
    .select({
      id: gateways.id,
      name: gateways.name,
      publicKey: gateways.publicKey,
      address: gateways.address,
      endpoint: gateways.endpoint,
      lastSeenAt: gateways.lastSeenAt,
    })
    .from(gateways)
    .orderBy(asc(gateways.id))
    .prepare(),
}));

/**
 * The live gateways, ordered by id: those whose heartbeat is within LIVE_WINDOW_MS of the newest heartbeat (relative,
 * so an outage of the database that stopped every heartbeat does not empty the list), and always `self`, the gateway
 * answering. Computed from the database alone, so every gateway gives the same list.
 */
export async function listLiveGateways(db: ReadDb, selfId: number): Promise<GatewayIdentity[]> {
  const rows = await queriesFor(db).all.all();
  const newest = Math.max(...rows.map((row) => Date.parse(row.lastSeenAt)));
  return rows
    .filter((row) => row.id === selfId || newest - Date.parse(row.lastSeenAt) <= LIVE_WINDOW_MS)
    .map(({ id, name, publicKey, address, endpoint }) => ({ id, name, publicKey, address, endpoint }));
}
