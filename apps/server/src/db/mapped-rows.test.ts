import { asc, eq, getTableColumns, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { insertNode } from '../modules/services/test-support.js';
import { domains, httpServices, nodes, tcpServices } from './schema.js';
import { mappedRows } from './prepared.js';

// The hot lists map their rows themselves (db/prepared.ts mappedRows); they must answer exactly what drizzle's own
// mapping answers, on either engine: booleans, JSON columns, SQL NULL, a left join with no row on the other side.

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
  const first = await insertNode(t.deps, { name: 'mapped-a', extraGatewayNetworks: ['10.9.0.0/24', '10.9.1.0/24'] });
  const second = await insertNode(t.deps, {
    name: 'mapped-b',
    enabled: false,
    isGateway: true,
    applyError: 'set aside',
  });
  await t.db.write(async (tx) => {
    await tx.insert(domains).values({ domain: 'mapped.example.test', ssl: 'certbot' }).run();
    await tx
      .insert(httpServices)
      .values([
        {
          nodeId: first.id,
          name: 'on a domain',
          domain: 'mapped.example.test',
          backendHost: '10.1.0.2',
          expiresAt: null,
        },
        {
          nodeId: second.id,
          name: 'default host',
          pathLocation: '/app',
          backendHost: '10.1.0.3',
          allowedIps: ['192.0.2.0/24'],
          enabled: false,
          expiresAt: '2026-12-01T00:00:00.000Z',
          healthIntervalSeconds: 30,
        },
      ])
      .run();
    await tx
      .insert(tcpServices)
      .values([
        { nodeId: first.id, name: 'ssh', proto: 'tcp', port: 2222, backendHost: '10.1.0.2', backendPort: 22 },
        {
          nodeId: second.id,
          name: 'dns',
          proto: 'udp',
          port: 5353,
          ssl: false,
          backendHost: '10.1.0.3',
          backendPort: 53,
        },
      ])
      .run();
  });
});
afterAll(async () => {
  await t.cleanup();
});

describe('mappedRows', () => {
  it('answers what drizzle answers: a whole table, and a table as a whole beside a left-joined column', async () => {
    const db = t.db;
    const nodeColumns = getTableColumns(nodes);
    const nodePage = db
      .select(nodeColumns)
      .from(nodes)
      .orderBy(asc(nodes.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare();
    const params = { limit: 10, offset: 0 };
    const nodeRows = await mappedRows(nodePage, nodeColumns).all(params);
    expect(nodeRows).toEqual(await nodePage.all(params));
    expect(nodeRows.map((row) => row.name)).toEqual(expect.arrayContaining(['mapped-a', 'mapped-b']));

    const httpFields = { row: httpServices, ssl: domains.ssl };
    const httpPage = db
      .select(httpFields)
      .from(httpServices)
      .leftJoin(domains, eq(domains.domain, httpServices.domain))
      .orderBy(httpServices.id)
      .prepare();
    const httpRows = await mappedRows(httpPage, httpFields).all();
    expect(httpRows).toEqual(await httpPage.all());
    expect(httpRows.map((row) => row.ssl)).toEqual(['certbot', null]);

    const tcpColumns = getTableColumns(tcpServices);
    const tcpPage = db.select(tcpColumns).from(tcpServices).orderBy(tcpServices.id).prepare();
    expect(await mappedRows(tcpPage, tcpColumns).all()).toEqual(await tcpPage.all());
  });
});
