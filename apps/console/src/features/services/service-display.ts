import type { HttpService, TcpService } from '@postern/contract';

/** Publicly exposed: switched on and actually served (the last data-plane apply accepted it). */
export function isPubliclyExposed(service: Pick<HttpService | TcpService, 'enabled' | 'applyError'>): boolean {
  return service.enabled && service.applyError === null;
}

/** Where the gateway forwards to, e.g. `http://10.0.0.4:8080` or `udp://10.0.0.4:53`. */
export function describeBackend(service: HttpService | TcpService): string {
  const scheme = 'proto' in service ? service.proto : service.backendProto;
  return `${scheme}://${service.backendHost}:${service.backendPort}`;
}
