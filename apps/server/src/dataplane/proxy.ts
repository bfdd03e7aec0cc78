import type { SupervisedProxy } from './supervisor.js';
import { parseLive, staleRequests, type ConnectionCutter } from './connections.js';
import type { HttpInstance } from './nginx/http-instance.js';
import { FALLBACK_CERT_NAME } from './nginx/options.js';
import type { StreamInstances } from './nginx/stream-instances.js';
import type { ProxyAdapter } from './reconciler.js';
import type { DataPlaneLogger, DictionaryUsage, HttpTraffic } from './types.js';
import { AccessPusher } from './proxy/access.js';
import { CertificatePusher } from './proxy/certificates.js';
import { ChallengePusher } from './proxy/challenges.js';
import { GoneServices, readDictionaries, readHttpTraffic } from './proxy/counters.js';
import { accessDrift, challengeDrift, routesAndCertificatesDrift, streamsDrift } from './proxy/drift.js';
import { DictionaryGrowth } from './proxy/growth.js';
import { NginxHolds } from './proxy/held.js';
import { PemDigests } from './proxy/pem-digests.js';
import { RoutePusher } from './proxy/route-pusher.js';
import { RouteTable } from './proxy/routes.js';
import { Snapshots } from './proxy/snapshots.js';

// The real proxy: the HTTP instance fed over its control socket, the TCP/UDP instances, the connection cutter.
// What nginx holds is tracked (proxy/held.ts: routes by host, their version), so a change pushes only what differs.
// When that knowledge is lost (nginx restarted or was changed behind our back, a push failed midway) it is read back
// from nginx (GET /digest, an MD5 per host) and the next push is again only what differs: never a push of everything,
// which at scale is larger than the control socket takes.
//
// Every push is all or nothing (lua/postern.lua `transact`). The shared dictionaries grow with the data
// (dict-sizes.ts, proxy/growth.ts); a change that still does not fit (a dictionary at its ceiling) is refused whole,
// and the rows that caused it are set aside (proxy/routes.ts): the routes of the services it adds or grows are left
// out (they get an applyError), everything else is pushed, and the next change tries them again. So a full
// dictionary never stops other changes.
//
// The parts (proxy/): held.ts what nginx holds; route-pusher.ts deltas over POST /routes; routes.ts the full sync with
// its set-aside services, the scoped patch and the table the snapshot is written from; certificates.ts,
// challenges.ts, access.ts the other pushes; growth.ts the dictionaries' sizes; snapshots.ts what a fresh master
// loads; drift.ts the read-back comparisons; counters.ts traffic and dictionary figures.

/** heal, drift, crowdedServices and forget: the part supervision uses (supervisor.ts). */
export interface Proxy extends ProxyAdapter, SupervisedProxy {
  /** Adopts or starts nginx and the service instances (before the first apply). */
  start(): Promise<void>;
  /** HTTP-01 answers, served on port 80 by nginx itself. */
  setChallenge(token: string, answer: string): Promise<void>;
  removeChallenge(token: string): Promise<void>;
  /** A certificate file was replaced (renewal, issuance): push it and reload the TCP instances serving it. */
  certificateInstalled(name: string): Promise<void>;
  /** HTTP traffic counters per service, as nginx counted them (lua/postern.lua `count()`). */
  httpTraffic(): Promise<{ epoch: string; services: Map<number, HttpTraffic> }>;
  /** How full nginx's shared dictionaries are, and the writes refused for lack of room. */
  dictionaries(): Promise<DictionaryUsage[]>;
  stop(options: { keepServing: boolean }): Promise<void>;
}

interface ProxyOptions {
  prefixDir: string;
  certsDir: string;
  http: HttpInstance;
  streams: StreamInstances;
  cutter: ConnectionCutter;
  logger: DataPlaneLogger;
  /** The PEMs' digests a drift check compares (shared with the certificate manager's look at the stored ones). */
  pemDigests?: PemDigests;
}

/** The parts of the proxy, each with its own state (proxy/). */
function proxyParts({ prefixDir, certsDir, http, logger }: ProxyOptions) {
  const { control } = http;
  const holds = new NginxHolds(control);
  const snapshots = new Snapshots(prefixDir, logger);
  const growth = new DictionaryGrowth(http, holds, () => snapshots.flushRoutes(), logger);
  const pusher = new RoutePusher(control, holds, logger);
  return {
    holds,
    snapshots,
    routes: new RouteTable(holds, pusher, growth, snapshots, logger),
    certs: new CertificatePusher(control, certsDir, holds, growth),
    access: new AccessPusher(control, holds, snapshots),
    challenges: new ChallengePusher(control, holds),
    gone: new GoneServices(control),
  };
}

/** Certificates replaced before start() (the first boot's fallback): nginx reads them from disk when it starts. */
class StartGate {
  isStarted = false;
  readonly installedBefore = new Set<string>();
}

export function createProxy(options: ProxyOptions): Proxy {
  const { http, streams, cutter, logger, certsDir } = options;
  const { holds, snapshots, routes, certs, access, challenges, gone } = proxyParts(options);
  const gate = new StartGate();
  /** Instances that could not start at the last sync (set aside): not drift. */
  const streamState = { failures: new Map<string, string>() };
  const pemDigests = options.pemDigests ?? new PemDigests();

  return {
    async start() {
      await http.start();
      await streams.adopt();
      // A running nginx (adopted, or a fresh one that loaded its snapshot) holds most of what the first apply wants:
      // only what differs is pushed.
      await holds.learn();
      await certs.publish([FALLBACK_CERT_NAME]);
      gate.isStarted = true;
      // Certificates replaced before this (the first boot's fallback): nginx read them from disk when it started, or
      // the publish above handed them over; the TCP instances serving them are reloaded now.
      for (const name of gate.installedBefore) await streams.reloadServing(name);
      gate.installedBefore.clear();
    },
    syncRoutes: (hosts, certNames, serviceCount) => routes.sync(hosts, certNames, serviceCount),
    reserveRoutes: (hosts, serviceCount) => routes.reserve(hosts, serviceCount),
    patchRoutes: (entries, hosts, certNames) => routes.patch(entries, hosts, certNames),
    // Before the routes: new policy entries, the key and revocations, so a route never names a policy nginx lacks.
    syncAccess: (table) => access.sync(table),
    // After the routes: entries no route names any more.
    pruneAccess: (table) => access.prune(table),
    publishCertificates: (names, given) => certs.publish(names, given),
    unpublishCertificates: (names) => certs.unpublish(names),
    async syncStreams(wanted) {
      streamState.failures = await streams.sync(wanted);
      return streamState.failures;
    },
    async patchStreams(wanted, keys) {
      const failures = await streams.patch(wanted, keys);
      for (const key of keys) streamState.failures.delete(key);
      for (const [key, message] of failures) streamState.failures.set(key, message);
      return failures;
    },
    async cutStale(revisions, only) {
      // Requests still open on the workers of a killed master count too: they serve until they end.
      const answer = await http.control.get<unknown>('/live');
      // cjson writes an empty list as {}.
      const held: unknown[] = Array.isArray(answer) ? answer : [];
      const live = parseLive([...held, ...http.drainingRequests()]);
      const stale = staleRequests(only ? live.filter((request) => only.has(request.serviceId)) : live, revisions);
      await cutter.cut(stale);
      // A scoped run's revisions are a few services': the counters of the others are the full run's to forget.
      if (only) return stale.length;
      await gone
        .forgetCounters(revisions)
        .catch((err: unknown) => logger.warn({ err }, 'nginx: could not forget the counters of removed services'));
      return stale.length;
    },
    async heal() {
      const restarted = await http.heal();
      if (restarted) {
        await holds.learn();
        await certs.publish([FALLBACK_CERT_NAME]);
      }
      return { http: restarted, streams: await streams.heal() };
    },
    setChallenge: (token, answer) => challenges.set(token, answer),
    removeChallenge: (token) => challenges.remove(token),
    syncChallenges: (answers) => challenges.sync(answers),
    async certificateInstalled(name) {
      // Before start() there is nothing to hand over: nginx reads the file when it starts (first boot: the fallback).
      if (!gate.isStarted) {
        gate.installedBefore.add(name);
        return;
      }
      holds.certs.delete(name);
      await certs
        .publish([name])
        .catch((err: unknown) => logger.error({ err, name }, 'nginx: could not hand over a renewed certificate'));
      await streams.reloadServing(name);
    },
    httpTraffic: () => readHttpTraffic(http.control),
    dictionaries: () => readDictionaries(http.control, holds.refusedPushes),
    async drift(wantedRoutes, certNames, wantedStreams, wantedChallenges, wantedAccess) {
      const served = routes.served(wantedRoutes);
      const { key } = wantedAccess ?? { key: null };
      return [
        ...(wantedAccess !== undefined && key !== null ? await accessDrift(http.control, wantedAccess, key) : []),
        ...(wantedChallenges === undefined ? [] : challengeDrift(holds.challenges, wantedChallenges)),
        ...(await routesAndCertificatesDrift(
          http.control,
          served,
          [FALLBACK_CERT_NAME, ...certNames],
          certsDir,
          pemDigests,
        )),
        ...streamsDrift(streams.running(), wantedStreams, streamState.failures),
      ];
    },
    crowdedServices: () => routes.crowdedServices(),
    forget: () => holds.forget(),
    async stop({ keepServing }) {
      await snapshots.flush();
      await streams.stop({ keepServing });
      await http.stop({ keepServing });
    },
  };
}
