import { randomBytes } from 'node:crypto';
import type { AppDeps } from '@postern/server/src/deps.js';
import { sqliteClientOf } from '@postern/server/src/db/client.js';

// Seeds the API benchmark's data in one transaction of raw prepared inserts (through the API each create would
// run a data-plane apply; the benchmark measures reads, not setup).

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
