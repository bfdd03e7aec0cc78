// Where a list request's time goes (bench/README.md "api-steps.ts"): each step the app runs for
// `GET /api/nodes?page=1&limit=10` and `GET /api/services/http?domain=…` timed on its own, in-process, over the
// same seeded 10,000-row database as api.ts, next to a whole injected request of the app and of a bare Fastify route
// (with and without the security headers), and the list routes on a Fastify of their own with the app's hooks added one
// by one. Prints CPU µs per call (median of rounds). No network, no root.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { operations } from '@postern/contract';
import { registerSecurityHeaders } from '@postern/server/src/http/security-headers.js';
import { registerSessionAuth } from '@postern/server/src/http/authenticate.js';
import { registerErrorHandlers } from '@postern/server/src/http/error-handler.js';
import { registerOperation } from '@postern/server/src/http/operation.js';
import { useZodCompilers } from '@postern/server/src/http/zod-provider.js';
import { responseSerializer } from '@postern/server/src/http/response-serializer.js';
import { registerOperationAudit } from '@postern/server/src/modules/audit/operation-audit.js';
import type { AppDeps } from '@postern/server/src/deps.js';
import { registerJsonParser } from '@postern/server/src/http/json-parser.js';
import { withStatus } from '@postern/server/src/cluster/peer-status.js';
import { verifySessionToken } from '@postern/server/src/modules/auth/sessions.js';
import { listNodes } from '@postern/server/src/modules/nodes/service.js';
import { listServices } from '@postern/server/src/modules/services/service.js';
import { startBenchApp } from './lib/api-app.js';
import { benchServiceDomain } from './lib/api-seed.js';
import { median, printTable } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 400);

/**
 * CPU µs per call (this process's user + system time, so other work on a shared machine counts far less than in
 * wall time): the median over ROUNDS rounds of CALLS sequential calls, after a warm-up round.
 */
async function timeIt(step: () => unknown): Promise<number> {
  const rounds: number[] = [];
  for (let round = -1; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) await step();
    const used = process.cpuUsage(start);
    if (round >= 0) rounds.push((used.user + used.system) / CALLS);
  }
  return median(rounds);
}

const dir = await mkdtemp(join(tmpdir(), 'postern-bench-steps-'));
const bench = await startBenchApp(dir, 10_000);
const { deps, token } = bench;
const headers = { authorization: `Bearer ${token}` };
const bare = Fastify({ logger: false });
bare.get('/bare', () => ({ status: 'ok' }));
const bareWithHeaders = Fastify({ logger: false });
registerSecurityHeaders(bareWithHeaders);
bareWithHeaders.get('/bare', () => ({ status: 'ok' }));

const nodesQuery = { page: '1', limit: '10' };
const servicesQuery = { domain: benchServiceDomain(500), page: '1', limit: '10' };
const nodesParsed = operations.listNodes.query.parse(nodesQuery);
const servicesParsed = operations.listHttpServices.query.parse(servicesQuery);
const nodesPage = await listNodes(deps, nodesParsed);
const servicesPage = await listServices(deps, 'http', servicesParsed);
const nodesSchema = operations.listNodes.response.schema;
const servicesSchema = operations.listHttpServices.response.schema;
const writeNodes = responseSerializer(nodesSchema);
const writeServices = responseSerializer(servicesSchema);

/** The two list routes on a Fastify of their own with the app's parts added one by one (the toggle ladder). */
async function ladderApp(deps: AppDeps, parts: { headers: boolean; auth: boolean; audit: boolean; rest?: boolean }) {
  const app = Fastify({ logger: false });
  if (parts.headers) registerSecurityHeaders(app);
  // The sign-in metrics hook is on the sign-in route only (app.ts): a list runs none.
  if (parts.rest) registerJsonParser(app);
  useZodCompilers(app);
  registerErrorHandlers(app);
  if (parts.auth) registerSessionAuth(app, deps);
  if (parts.audit) registerOperationAudit(app, deps);
  registerOperation(app, operations.listNodes, async (request) => await listNodes(deps, request.query));
  registerOperation(
    app,
    operations.listHttpServices,
    async (request) => await listServices(deps, 'http', request.query),
  );
  await app.ready();
  return app;
}

const rows: [string, number][] = [];
const step = async (label: string, fn: () => unknown) => {
  rows.push([label, await timeIt(fn)]);
};
await step('bare Fastify route, whole request (inject)', () => bare.inject({ url: '/bare' }));
await step('  + security headers (onRequest)', () => bareWithHeaders.inject({ url: '/bare' }));
await step('app: GET /api/nodes?page=1&limit=10, whole request (inject)', () =>
  bench.app.inject({ url: '/api/nodes?page=1&limit=10', headers }),
);
await step('app: GET /api/services/http?domain=…, whole request (inject)', () =>
  bench.app.inject({ url: `/api/services/http?domain=${servicesQuery.domain}`, headers }),
);
const ladder = [
  ['route + zod schemas only', { headers: false, auth: false, audit: false }],
  ['  + security headers', { headers: true, auth: false, audit: false }],
  ['  + session authentication and role policy', { headers: true, auth: true, audit: false }],
  ['  + operation audit hooks', { headers: true, auth: true, audit: true }],
] as const;
const appDeps: AppDeps = { ...deps, dataPlane: withStatus(deps.dataPlane, bench.app.gatewayPeerStatus.status) };
for (const [label, parts, ladderDeps] of [
  ...ladder.map(([label, parts]) => [label, parts, deps] as const),
  ['  + JSON parser', { headers: true, auth: true, audit: true, rest: true }, deps],
  ['  + node status combined over gateways', { headers: true, auth: true, audit: true, rest: true }, appDeps],
] as const) {
  const app = await ladderApp(ladderDeps, parts);
  await step(`ladder, nodes list: ${label}`, () => app.inject({ url: '/api/nodes?page=1&limit=10', headers }));
  await step(`ladder, services list: ${label}`, () =>
    app.inject({ url: `/api/services/http?domain=${servicesQuery.domain}`, headers }),
  );
  await app.close();
}
await step('authentication: verifySessionToken (token remembered, session row read)', () =>
  verifySessionToken(deps, token),
);
await step('query validation: nodes', () => operations.listNodes.query.safeParse(nodesQuery));
await step('query validation: services', () => operations.listHttpServices.query.safeParse(servicesQuery));
await step('handler: listNodes (page + count)', () => listNodes(deps, nodesParsed));
await step('handler: listServices http on a domain (page + count)', () => listServices(deps, 'http', servicesParsed));
await step('serialisation: nodes page, schema.parse + JSON.stringify', () =>
  JSON.stringify(nodesSchema.parse(nodesPage)),
);
await step('  JSON.stringify alone', () => JSON.stringify(nodesPage));
await step("  the app's serialiser (compiled from the schema: http/response-serializer.ts)", () =>
  writeNodes(nodesPage),
);
await step('serialisation: services page, schema.parse + JSON.stringify', () =>
  JSON.stringify(servicesSchema.parse(servicesPage)),
);
await step('  JSON.stringify alone', () => JSON.stringify(servicesPage));
await step("  the app's serialiser (compiled from the schema: http/response-serializer.ts)", () =>
  writeServices(servicesPage),
);

console.log(`load average ${(loadavg()[0] ?? 0).toFixed(2)}; CPU µs per call, median of ${ROUNDS} rounds of ${CALLS}`);
printTable(
  ['step', 'µs'],
  rows.map(([label, us]) => [label, us.toFixed(1)]),
);
await bench.close();
await bare.close();
await bareWithHeaders.close();
await rm(dir, { recursive: true, force: true });
