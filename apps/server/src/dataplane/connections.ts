import { runCommand } from './exec.js';
import type { DataPlaneLogger } from './types.js';
import { isIPv4, isPort } from './validate.js';

// Precise cut-off for HTTP services without a reload. nginx's Lua module records, per client connection, the
// service (and the revision of its route) of the request in flight on it (lua/postern.lua `remember`). After a change,
// every connection whose service is no longer served, or is served differently, is destroyed by the kernel
// (`ss -K`, sock_diag SOCK_DESTROY, CONFIG_INET_DIAG_DESTROY): nginx sees its client socket fail and ends the request,
// upstream included. Other services' connections — and other requests of nobody — are never touched.

export interface LiveRequest {
  serviceId: number;
  revision: string;
  clientAddress: string;
  clientPort: number;
  serverPort: number;
}

/** Parses nginx's `GET /live` answer; entries that do not look right are ignored. */
export function parseLive(entries: unknown): LiveRequest[] {
  if (!Array.isArray(entries)) return [];
  const out: LiveRequest[] = [];
  for (const entry of entries) {
    const value: unknown = Array.isArray(entry) ? entry[1] : null;
    if (typeof value !== 'string') continue;
    const [svc = '', revision = '', clientAddress = '', clientPort = '', serverPort = ''] = value.split(' ');
    const serviceId = Number(svc);
    if (
      !Number.isSafeInteger(serviceId) ||
      !isIPv4(clientAddress) ||
      !isPort(Number(clientPort)) ||
      !isPort(Number(serverPort))
    )
      continue;
    out.push({ serviceId, revision, clientAddress, clientPort: Number(clientPort), serverPort: Number(serverPort) });
  }
  return out;
}

/** Live requests of services that are gone or changed: what must be cut. */
export function staleRequests(live: readonly LiveRequest[], revisions: ReadonlyMap<number, string>): LiveRequest[] {
  return live.filter((request) => revisions.get(request.serviceId) !== request.revision);
}

/** `ss -K` filters, a bounded number of sockets each (the filter is one argv string). */
export function killFilters(requests: readonly LiveRequest[], perFilter = 64): string[][] {
  const filters: string[][] = [];
  for (let i = 0; i < requests.length; i += perFilter) {
    const terms = requests
      .slice(i, i + perFilter)
      .map((r) => `( sport = :${r.serverPort} and dst ${r.clientAddress}:${r.clientPort} )`);
    filters.push(['-K', '-t', '-n', 'state', 'established', terms.join(' or ')]);
  }
  return filters;
}

export interface ConnectionCutter {
  cut(requests: readonly LiveRequest[]): Promise<void>;
}

export function createConnectionCutter(logger: DataPlaneLogger): ConnectionCutter {
  let hasWarned = false;
  return {
    async cut(requests) {
      for (const args of killFilters(requests)) {
        try {
          await runCommand('ss', args);
        } catch (err) {
          // A kernel without socket destroy: the connections end when their client or backend closes them.
          if (!hasWarned)
            logger.warn(
              { err },
              'could not cut the open connections of a disabled service (ss -K needs CONFIG_INET_DIAG_DESTROY)',
            );
          hasWarned = true;
          return;
        }
      }
      if (requests.length > 0)
        logger.info({ connections: requests.length }, 'cut the open connections of disabled or changed services');
    },
  };
}
