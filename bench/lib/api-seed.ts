import { randomBytes } from 'node:crypto';
import type { AppDeps } from '@postern/server/src/deps.js';
import { sqliteClientOf } from '@postern/server/src/db/client.js';
import { benchDomain } from './seed-services.js';

// Seeds the in-process benchmarks' data in one transaction of raw prepared inserts (through the API each create would
// run a data-plane apply; the benchmarks measure reads and runs, not setup).

export const SERVICES_PER_DOMAIN = 10;
export const benchServiceDomain = (index: number): string => `svc${index}.bench.test`;

/** 10.44.0.2, 10.44.0.3, …: node addresses after the gateway's 10.44.0.1 (default subnet 10.44.0.0/16). */
function nodeAddress(index: number): string {
  const n = index + 2;
  return `10.44.${Math.floor(n / 256)}.${n % 256}`;
}

/** Inserts `nodes` nodes and `services` HTTP services (one per node, ten per domain); returns the seconds it took. */
export function seedNodesAndServices(deps: Pick<AppDeps, 'db' | 'secrets'>, nodes: number, services: number): number {
  const started = performance.now();
  const sqlite = sqliteClientOf(deps.db);
  const addNode = sqlite.prepare(
    'INSERT INTO nodes (name, address, public_key, private_key_enc) VALUES (?, ?, ?, ?) RETURNING id',
  );
  const addDomain = sqlite.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
  const addService = sqlite.prepare(
    `INSERT INTO http_services (node_id, name, domain, path_location, backend_host, backend_port) VALUES (?, ?, ?, ?, ?, 80)`,
  );
  sqlite.transaction(() => {
    const nodeIds: number[] = [];
    for (let i = 0; i < nodes; i++) {
      // Random bytes stand in for keys: nothing in this benchmark speaks WireGuard.
      const row = addNode.get(
        `bench-node-${i}`,
        nodeAddress(i),
        randomBytes(32).toString('base64'),
        deps.secrets.encrypt(randomBytes(32).toString('base64')),
      ) as { id: number };
      nodeIds.push(row.id);
    }
    const domainCount = Math.ceil(services / SERVICES_PER_DOMAIN);
    for (let d = 0; d < domainCount; d++) addDomain.run(benchServiceDomain(d));
    for (let i = 0; i < services; i++) {
      const nodeIndex = i % nodes;
      addService.run(
        nodeIds[nodeIndex],
        `bench-svc-${i}`,
        benchServiceDomain(i % domainCount),
        `/p${Math.floor(i / domainCount)}`,
        nodeAddress(nodeIndex),
      );
    }
  })();
  return (performance.now() - started) / 1000;
}

/**
 * Inserts domains d0..d(count-1).bench.test with one HTTP service each at `/` on the first seeded node (its tunnel
 * address as the backend), as apply.ts seeds them; with `certificateRows`, also the certificate row a gateway keeps
 * for each once it has made it (the PEMs themselves are not written). Returns that node's id and the seconds taken.
 */
export function seedDomainServices(
  deps: Pick<AppDeps, 'db'>,
  count: number,
  { certificateRows }: { certificateRows: boolean },
): { nodeId: number; seconds: number } {
  const started = performance.now();
  const sqlite = sqliteClientOf(deps.db);
  const node = sqlite.prepare('SELECT id, address FROM nodes WHERE is_local = 0 ORDER BY id LIMIT 1').get() as
    { id: number; address: string } | undefined;
  if (node === undefined) throw new Error('seed a node first (openBenchDeps with size >= 1)');
  const addDomain = sqlite.prepare(`INSERT INTO domains (domain, ssl) VALUES (?, 'self-signed')`);
  const addService = sqlite.prepare(
    `INSERT INTO http_services (node_id, name, domain, path_location, backend_proto, backend_host, backend_port) VALUES (?, ?, ?, '/', 'http', ?, 8080)`,
  );
  const addCertificate = sqlite.prepare(
    `INSERT INTO certificates (domain_id, state, issuer, not_before, not_after, fingerprint, failures, names) VALUES ((SELECT id FROM domains WHERE domain = ?), 'self-signed', 'CN=x', '2026-01-01T00:00:00.000Z', '2036-01-01T00:00:00.000Z', 'AA', 0, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 0; i < count; i++) {
      const domain = benchDomain(i);
      addDomain.run(domain);
      addService.run(node.id, `bench-${i}`, domain, node.address);
      if (certificateRows) addCertificate.run(domain, JSON.stringify([domain]));
    }
  })();
  return { nodeId: node.id, seconds: (performance.now() - started) / 1000 };
}
