import { and, between, eq } from 'drizzle-orm';
import { maxMessage, minMessage } from '@postern/contract';
import type { Config } from '../../env.js';
import { tcpServices } from '../../db/schema.js';
import { fieldError } from '../../errors.js';
import type { Tx } from '../../db/client.js';

type PortConfig = Pick<Config, 'tcpPortRange' | 'wgPort'>;
type Proto = 'tcp' | 'udp';

/** The gateway's own WireGuard listener is a UDP port no service may take, even inside the range. */
const isReserved = (config: PortConfig, proto: Proto, port: number): boolean =>
  proto === 'udp' && port === config.wgPort;

/** Lowest free port of the range for `proto` (TCP and UDP have separate listeners, so they do not collide). */
async function allocatePort(tx: Tx, config: PortConfig, proto: Proto, exceptId?: number): Promise<number> {
  const [low, high] = config.tcpPortRange;
  const used = new Set(
    (
      await tx
        .select({ id: tcpServices.id, port: tcpServices.port })
        .from(tcpServices)
        .where(and(eq(tcpServices.proto, proto), between(tcpServices.port, low, high)))
        .all()
    )
      .filter((row) => row.id !== exceptId)
      .map((row) => row.port),
  );
  for (let port = low; port <= high; port++) {
    if (!used.has(port) && !isReserved(config, proto, port)) return port;
  }
  throw fieldError(
    'port',
    `No free ${proto.toUpperCase()} port is left in ${low}-${high}; delete a service or widen POSTERN_TCP_PORT_RANGE`,
  );
}

/**
 * The public port a TCP/UDP service gets: the requested one if it lies in the range and is free for its protocol,
 * otherwise a 422 on `port`; with no request, the lowest free one. Runs in the caller's (immediate) transaction so
 * two creates cannot pick the same port. `exceptId`: the service being edited; `revealOwner`: whether a taken
 * port's message may name the service holding it (the admin's calls, never a node token's).
 */
export async function choosePublicPort(
  tx: Tx,
  config: PortConfig,
  proto: Proto,
  requested: number | null | undefined,
  { exceptId, revealOwner = true }: { exceptId?: number; revealOwner?: boolean } = {},
): Promise<number> {
  if (requested === null || requested === undefined) return await allocatePort(tx, config, proto, exceptId);
  const [low, high] = config.tcpPortRange;
  if (requested < low) throw fieldError('port', minMessage(low));
  if (requested > high) throw fieldError('port', maxMessage(high));
  if (isReserved(config, proto, requested)) {
    throw fieldError('port', `Port ${requested}/${proto} is the gateway's WireGuard port`);
  }
  const other = await tx
    .select({ id: tcpServices.id, name: tcpServices.name })
    .from(tcpServices)
    .where(and(eq(tcpServices.proto, proto), eq(tcpServices.port, requested)))
    .get();
  if (other && other.id !== exceptId) throw portTaken(proto, requested, revealOwner ? other.name : undefined);
  return requested;
}

export function portTaken(proto: Proto, port: number, serviceName?: string) {
  const owner = serviceName ? ` by the service "${serviceName}"` : '';
  return fieldError('port', `Port ${port}/${proto} is already used${owner}`);
}
