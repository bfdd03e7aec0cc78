import { Agent, request } from 'node:https';

// One HTTPS GET to the gateway with a given SNI/Host, from the benchmark process itself (over the lab's
// management link): polling in-process gives millisecond resolution, a curl per poll would not.

export interface ProbeAnswer {
  status: number;
  body: string;
}

export function probeHttps(
  address: string,
  domain: string,
  path: string,
  timeoutMs = 2000,
  over?: { agent: Agent; servername: string },
): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: address,
        port: 443,
        path,
        servername: over?.servername ?? domain,
        headers: { host: domain },
        rejectUnauthorized: false,
        agent: over?.agent ?? false,
        timeout: timeoutMs,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/**
 * Probes over kept-alive connections, all opened with one SNI name (`servername`, a domain the gateway serves), each
 * request naming its domain in Host: nginx routes by Host (lua/postern.lua), the certificate alone goes by SNI. A
 * burst's 1,000 checks then cost 1,000 requests, not 1,000 TLS handshakes (~2 ms of nginx's CPU and as much of this
 * process's each: the handshakes, not the gateway, set the pace of a burst's "all served"). `close` ends the sockets.
 */
export function keptAliveProbe(
  address: string,
  servername: string,
  sockets: number,
): { probe: (domain: string, path: string) => Promise<ProbeAnswer>; close: () => void } {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  return {
    probe: (domain, path) => probeHttps(address, domain, path, 2000, { agent, servername }),
    close: () => agent.destroy(),
  };
}
