import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import * as packet from 'dns-packet';

// One DNS question over UDP to one server, with dns-packet: no resolver cache in between (a TXT record that just
// appeared must be seen at the next poll) and the authority section readable (where a zone's SOA comes back for a
// name below its apex).

export interface DnsAnswer {
  rcode: string;
  /** Whether the server answered authoritatively (AA). */
  authoritative: boolean;
  answers: packet.Answer[];
  authorities: packet.Answer[];
  additionals: packet.Answer[];
}

export interface DnsServer {
  address: string;
  port: number;
}

export type DnsQuery = (
  server: DnsServer,
  name: string,
  type: packet.RecordType,
  options?: { recursive?: boolean; timeoutMs?: number },
) => Promise<DnsAnswer>;

/** Sends one question (retried once on a timeout); rejects when no answer came. */
export const queryDns: DnsQuery = async (server, name, type, options = {}) => {
  const timeoutMs = options.timeoutMs ?? 2000;
  let lastError: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return await askOnce(server, name, type, options.recursive ?? false, timeoutMs);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
};

function askOnce(
  server: DnsServer,
  name: string,
  type: packet.RecordType,
  recursive: boolean,
  timeoutMs: number,
): Promise<DnsAnswer> {
  const id = randomInt(1, 65_535);
  const query = packet.encode({
    type: 'query',
    id,
    flags: recursive ? packet.RECURSION_DESIRED : 0,
    questions: [{ type, name, class: 'IN' }],
  });
  return new Promise((resolve, reject) => {
    const socket = createSocket(server.address.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no answer from ${server.address}:${String(server.port)} within ${String(timeoutMs)} ms`));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
    socket.on('message', (message) => {
      let decoded: packet.Packet;
      try {
        decoded = packet.decode(message);
      } catch {
        return; // not an answer: keep waiting
      }
      if (decoded.id !== id) return;
      clearTimeout(timer);
      socket.close();
      resolve({
        // The decoder sets rcode on answers; its types leave it out.
        rcode: (decoded as packet.Packet & { rcode?: string }).rcode ?? 'NOERROR',
        authoritative: ((decoded.flags ?? 0) & packet.AUTHORITATIVE_ANSWER) !== 0,
        answers: decoded.answers ?? [],
        authorities: decoded.authorities ?? [],
        additionals: decoded.additionals ?? [],
      });
    });
    socket.send(query, server.port, server.address);
  });
}

/** The strings of a TXT answer (dns-packet gives Buffers, or arrays of them). */
export function txtValues(answer: packet.Answer): string[] {
  if (answer.type !== 'TXT') return [];
  const data = answer.data as unknown;
  const parts = Array.isArray(data) ? data : [data];
  return [parts.map((part) => (Buffer.isBuffer(part) ? part.toString('utf8') : String(part))).join('')];
}
