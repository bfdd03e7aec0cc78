import type { HttpService, SslMode, TcpService } from '@postern/contract';
import type { Config } from '../../env.js';
import type { httpServices, tcpServices } from '../../db/schema.js';

export type HttpServiceRow = typeof httpServices.$inferSelect;
export type TcpServiceRow = typeof tcpServices.$inferSelect;

type PublicConfig = Pick<Config, 'publicHost' | 'httpsPort' | 'noDomainHttpsPort'>;

/**
 * `https://<domain>[:port]<path>`, or for a service without a domain `https://<public host>:<no-domain port><path>`:
 * those are published on their own port, an origin apart from the console's. The port only when it is not 443.
 */
export function httpPublicAccess(config: PublicConfig, domain: string, pathLocation: string): string {
  const host = domain === '' ? config.publicHost : domain;
  const portNumber = domain === '' ? config.noDomainHttpsPort : config.httpsPort;
  const port = portNumber === 443 ? '' : `:${portNumber}`;
  return `https://${host}${port}${pathLocation}`;
}

/** `tcp://host:port` or `udp://host:port`, on the service's domain when it has one. */
export function streamPublicAccess(
  config: PublicConfig,
  proto: 'tcp' | 'udp',
  domain: string | null,
  port: number,
): string {
  return `${proto}://${domain ?? config.publicHost}:${port}`;
}

/** Who decided what, as the rules read it: a decision of unknown origin (a row from before) is the operator's. */
function decisionsOf(
  row: Pick<HttpServiceRow, 'enabled' | 'expiresAt' | 'createdBy' | 'disabledBy' | 'expirySetBy'>,
): Pick<HttpService, 'createdBy' | 'disabledBy' | 'expirySetBy'> {
  return {
    createdBy: row.createdBy,
    disabledBy: row.enabled ? null : (row.disabledBy ?? 'admin'),
    expirySetBy: row.expiresAt === null ? null : (row.expirySetBy ?? 'admin'),
  };
}

/** `domainSsl` is the certificate mode of the service's domain (null: default host, served self-signed). */
export function toHttpService(config: PublicConfig, row: HttpServiceRow, domainSsl: SslMode | null): HttpService {
  return {
    id: row.id,
    nodeId: row.nodeId,
    name: row.name,
    domain: row.domain === '' ? null : row.domain,
    pathLocation: row.pathLocation,
    backendProto: row.backendProto,
    backendHost: row.backendHost,
    backendPort: row.backendPort,
    allowedIps: row.allowedIps,
    blockedIps: row.blockedIps,
    enabled: row.enabled,
    publicAccess: httpPublicAccess(config, row.domain, row.pathLocation),
    ssl: domainSsl ?? 'self-signed',
    applyError: row.applyError,
    expiresAt: row.expiresAt,
    ...decisionsOf(row),
    source: row.source ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function toTcpService(config: PublicConfig, row: TcpServiceRow): TcpService {
  return {
    id: row.id,
    nodeId: row.nodeId,
    name: row.name,
    domain: row.domain,
    proto: row.proto,
    port: row.port,
    ssl: row.ssl,
    backendHost: row.backendHost,
    backendPort: row.backendPort,
    allowedIps: row.allowedIps,
    blockedIps: row.blockedIps,
    enabled: row.enabled,
    publicAccess: streamPublicAccess(config, row.proto, row.domain, row.port),
    applyError: row.applyError,
    expiresAt: row.expiresAt,
    ...decisionsOf(row),
    source: row.source ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
