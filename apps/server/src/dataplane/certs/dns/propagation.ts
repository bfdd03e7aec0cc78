import { isIPv4 } from '../../validate.js';
import { queryDns, txtValues, type DnsQuery, type DnsServer } from './query.js';

// DNS-01: before the CA is told to look, the TXT record must be on every authoritative server of its zone, or the
// CA may ask one that has not got it yet and fail the order. The zone is found from the SOA the resolvers give for
// the record's name (in the answer at a zone's apex, in the authority section below it), its servers from its NS
// records; each server is then asked directly (no recursion, no cache) until all hold the value, or the timeout.

export interface PropagationOptions {
  /** The gateway's resolvers (POSTERN_RESOLVERS or /etc/resolv.conf), port 53. */
  resolvers: readonly string[];
  timeoutMs: number;
  intervalMs?: number;
  query?: DnsQuery;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface ZoneFacts {
  zone: string;
  servers: { name: string; address: string }[];
}

/** An answer's data as text (names and addresses; dns-packet types it per record type). */
const dataOf = (answer: object): string => String((answer as { data?: unknown }).data);
const strip = (name: string): string => name.replace(/\.$/, '').toLowerCase();
const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks the resolvers in turn; the first answer that is not a failure wins. */
async function askResolvers(
  options: PropagationOptions,
  name: string,
  type: 'SOA' | 'NS' | 'A' | 'CNAME',
): Promise<Awaited<ReturnType<DnsQuery>>> {
  const query = options.query ?? queryDns;
  if (options.resolvers.length === 0) throw new Error('the gateway has no DNS resolver (POSTERN_RESOLVERS)');
  let lastError: unknown = null;
  for (const address of options.resolvers) {
    try {
      const answer = await query({ address, port: 53 }, name, type, { recursive: true });
      if (answer.rcode === 'NOERROR' || answer.rcode === 'NXDOMAIN') return answer;
      lastError = new Error(`${address} answered ${answer.rcode} for ${name} ${type}`);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(`no resolver answered for ${name} ${type}`);
}

/** The name a record really lives at: `_acme-challenge.example.com` may be a CNAME (acme-dns delegation). */
export async function followCname(name: string, options: PropagationOptions): Promise<string> {
  let current = name;
  for (let hops = 0; hops < 8; hops++) {
    const answer = await askResolvers(options, current, 'CNAME');
    const cname = answer.answers.find((a) => a.type === 'CNAME' && strip(a.name) === strip(current));
    if (cname === undefined) return current;
    current = strip(dataOf(cname));
  }
  throw new Error(`${name}: too many CNAMEs`);
}

/** The zone holding `name` and the addresses of its authoritative servers. */
export async function findZone(name: string, options: PropagationOptions): Promise<ZoneFacts> {
  const soa = await askResolvers(options, name, 'SOA');
  const record = [...soa.answers, ...soa.authorities].find((a) => a.type === 'SOA');
  if (record === undefined) throw new Error(`no DNS zone holds ${name} (no SOA record)`);
  const zone = strip(record.name);
  const ns = await askResolvers(options, zone, 'NS');
  const names = ns.answers.filter((a) => a.type === 'NS').map((a) => strip(dataOf(a)));
  if (names.length === 0) throw new Error(`the zone ${zone} has no NS records`);
  const servers: ZoneFacts['servers'] = [];
  for (const server of names) {
    const glue = ns.additionals.filter((a) => a.type === 'A' && strip(a.name) === server).map(dataOf);
    const addresses = glue.length > 0 ? glue : isIPv4(server) ? [server] : await addressesOf(server, options);
    for (const address of addresses) servers.push({ name: server, address });
  }
  if (servers.length === 0) throw new Error(`no address for the name servers of ${zone} (${names.join(', ')})`);
  return { zone, servers };
}

async function addressesOf(host: string, options: PropagationOptions): Promise<string[]> {
  const answer = await askResolvers(options, host, 'A');
  return answer.answers.filter((a) => a.type === 'A').map(dataOf);
}

/** The TXT values `server` holds for `name` right now (its own answer, not a cache's). */
async function txtAt(server: DnsServer, name: string, query: DnsQuery): Promise<string[]> {
  const answer = await query(server, name, 'TXT', { recursive: false });
  return answer.answers.filter((a) => strip(a.name) === strip(name)).flatMap(txtValues);
}

/**
 * Waits until every authoritative server of the record's zone holds `value` at `name` (present) or no longer holds
 * it (absent). Rejects after the timeout with the servers still behind, by name and address.
 */
export async function waitForTxt(
  name: string,
  value: string,
  want: 'present' | 'absent',
  options: PropagationOptions,
): Promise<void> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const query = options.query ?? queryDns;
  const deadline = now() + options.timeoutMs;
  const target = await followCname(name, options);
  const { servers } = await findZone(target, options);
  let behind = servers;
  let lastProblem = '';
  for (;;) {
    const still: typeof servers = [];
    for (const server of behind) {
      try {
        const values = await txtAt({ address: server.address, port: 53 }, target, query);
        if (values.includes(value) !== (want === 'present')) still.push(server);
      } catch (err) {
        lastProblem = err instanceof Error ? err.message : String(err);
        still.push(server);
      }
    }
    behind = still;
    if (behind.length === 0) return;
    if (now() >= deadline) {
      const list = behind.map((s) => `${s.name} (${s.address})`).join(', ');
      const seconds = Math.round(options.timeoutMs / 1000);
      throw new Error(
        `the TXT record ${target} ${want === 'present' ? 'did not appear on' : 'is still on'} ${list} within ${String(seconds)} s` +
          (lastProblem === '' ? '' : ` (last error: ${lastProblem})`),
      );
    }
    await sleep(options.intervalMs ?? 2000);
  }
}
