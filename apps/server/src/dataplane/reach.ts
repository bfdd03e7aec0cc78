import { Resolver } from 'node:dns/promises';
import { isIPv4 } from '@postern/contract';
import { METADATA_ADDRESSES, type ReachedAddress } from '../lib/network-guard.js';

// What the gateway host reaches outside any tunnel because of its own settings: the database, the DNS resolvers,
// the ACME directory, the clouds' metadata addresses. No routing table shows them (they are behind the default
// route), so a gateway node's subnet that covers one would silently take the gateway's own traffic. Names are
// resolved as the gateway resolves them (/etc/hosts, then the resolvers nginx uses) and kept a minute, so the
// apply path can ask without waiting.

export type { ReachedAddress } from '../lib/network-guard.js';

export interface ReachOptions {
  /** Name servers the gateway asks (nginx's `resolver`); empty: the system's. */
  resolvers: readonly string[];
  /** The database's host (POSTERN_DATABASE_URL's host, a name or an address); undefined: SQLite. */
  databaseHost?: string | undefined;
  /** The ACME directory's URL. */
  acmeDirectoryUrl?: string | undefined;
  /** /etc/hosts, name → address. */
  staticHosts: () => ReadonlyMap<string, string>;
  /** How a name outside /etc/hosts resolves; default: DNS through `resolvers`. */
  lookup?: (name: string) => Promise<string[]>;
  /** How long an answer is kept (default 60 s). */
  ttlMs?: number;
}

export interface GatewayReach {
  /** The addresses of the gateway's settings and the metadata addresses, each with what it is; names resolved. */
  destinations(): Promise<ReachedAddress[]>;
  /** The same from what is known now, without waiting (names not resolved yet are asked for in the background). */
  knownDestinations(): ReachedAddress[];
  /** IPv4 addresses a host name stands for ([] when it does not resolve). */
  resolve(name: string): Promise<string[]>;
  /** The same from what is known now, without waiting. */
  known(name: string): string[];
}

const LOOKUP_TIMEOUT_MS = 1500;
const MAX_CACHED_NAMES = 10_000;

/** DNS (A records) through the given servers, one retry; any failure is "does not resolve". */
export function dnsLookup(resolvers: readonly string[]): (name: string) => Promise<string[]> {
  const resolver = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 2 });
  if (resolvers.length > 0) resolver.setServers([...resolvers]);
  return async (name) => await resolver.resolve4(name).catch(() => []);
}

/** The host of a database or directory URL, as written (a name or an IPv4 address); undefined when none. */
export function urlHost(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const host = new URL(url).hostname;
    return host === '' ? undefined : host.toLowerCase();
  } catch {
    return undefined;
  }
}

export function createGatewayReach(options: ReachOptions): GatewayReach {
  const ttlMs = options.ttlMs ?? 60_000;
  const lookup = options.lookup ?? dnsLookup(options.resolvers);
  const answers = new Map<string, { addresses: string[]; at: number }>();
  const asking = new Map<string, Promise<string[]>>();

  function fromHostsOrAddress(name: string): string[] | null {
    if (isIPv4(name)) return [name];
    const listed = options.staticHosts().get(name.toLowerCase());
    return listed === undefined ? null : [listed];
  }

  async function resolve(name: string): Promise<string[]> {
    const direct = fromHostsOrAddress(name);
    if (direct) return direct;
    const key = name.toLowerCase();
    const cached = answers.get(key);
    if (cached && Date.now() - cached.at < ttlMs) return cached.addresses;
    const pending = asking.get(key);
    if (pending) return await pending;
    const ask = lookup(key)
      .then((addresses) => addresses.filter((address) => isIPv4(address)))
      .catch(() => [])
      .then((addresses) => {
        if (answers.size >= MAX_CACHED_NAMES) answers.clear();
        answers.set(key, { addresses, at: Date.now() });
        return addresses;
      })
      .finally(() => asking.delete(key));
    asking.set(key, ask);
    return await ask;
  }

  function known(name: string): string[] {
    const direct = fromHostsOrAddress(name);
    if (direct) return direct;
    const cached = answers.get(name.toLowerCase());
    if (!cached || Date.now() - cached.at >= ttlMs) void resolve(name);
    return cached?.addresses ?? [];
  }

  /** [name or address, what it is, the setting that names it] */
  const settings = (): [string, string, string][] => {
    const acmeHost = urlHost(options.acmeDirectoryUrl);
    return [
      ...(options.databaseHost ? [[options.databaseHost, 'the database host', 'POSTERN_DATABASE_URL'] as const] : []),
      ...options.resolvers.map(
        (address) => [address, 'a DNS resolver', 'POSTERN_RESOLVERS or /etc/resolv.conf'] as const,
      ),
      ...(acmeHost === undefined ? [] : [[acmeHost, 'the ACME directory host', 'POSTERN_ACME_DIRECTORY'] as const]),
    ].map(([name, what, setting]) => [name, what, setting]);
  };
  const describe = ([name, what, setting]: [string, string, string], address: string): ReachedAddress => ({
    address,
    what: `${what}${name === address ? '' : ` ${name}`} (${setting})`,
    kind: 'setting',
  });
  const metadata = METADATA_ADDRESSES.map(([address, what]): ReachedAddress => ({ address, what, kind: 'metadata' }));

  return {
    async destinations() {
      const named = await Promise.all(
        settings().map(async (setting) => (await resolve(setting[0])).map((address) => describe(setting, address))),
      );
      return [...named.flat(), ...metadata];
    },
    knownDestinations() {
      return [
        ...settings().flatMap((setting) => known(setting[0]).map((address) => describe(setting, address))),
        ...metadata,
      ];
    },
    resolve,
    known,
  };
}
