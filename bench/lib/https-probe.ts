import { request } from 'node:https';

// One HTTPS GET to the gateway with a given SNI/Host, from the benchmark process itself (over the lab's
// management link): polling in-process gives millisecond resolution, a curl per poll would not.

export interface ProbeAnswer {
  status: number;
  body: string;
}

export function probeHttps(address: string, domain: string, path: string, timeoutMs = 2000): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: address,
        port: 443,
        path,
        servername: domain,
        headers: { host: domain },
        rejectUnauthorized: false,
        agent: false,
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
