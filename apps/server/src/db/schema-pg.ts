import { is, SQL, sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  unique,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTable,
} from 'drizzle-orm/pg-core';
import {
  getTableConfig,
  SQLiteColumn as SQLiteColumnClass,
  SQLiteTable,
  type SQLiteColumn,
} from 'drizzle-orm/sqlite-core';
import * as sqliteSchema from './schema.js';

// The PostgreSQL twin of schema.ts, derived from it when this module loads: schema.ts is the one place a table is
// declared. It exists for drizzle-kit only (`drizzle-kit generate --config drizzle.pg.config.ts` writes drizzle-pg/);
// queries are written once against schema.ts and run on PostgreSQL through db/postgres.ts.
//
// SQLite integer → bigint (SQLite's integers are 64-bit), integer in boolean mode → boolean, text (also json) → text,
// real → double precision. An autoincrement primary key becomes a bigserial; drizzle's SQLite dialect sends an
// explicit null for an omitted id, which a trigger from a custom migration (drizzle-pg/0001_*) turns into nextval.

/** Derived at run time, so typed loosely: drizzle-kit reads the tables' configuration, no query is typed on them. */
type AnyPgTable = PgTable;

/** What every pg-core column builder has; the derivation chains only these. */
interface Builder {
  primaryKey(): Builder;
  notNull(): Builder;
  unique(name?: string): Builder;
  default(value: unknown): Builder;
}

function literal(value: string): SQL {
  return sql.raw(`'${value.replace(/'/g, "''")}'`);
}

function pgType(column: SQLiteColumn): PgColumnBuilderBase {
  const name = column.name;
  const autoIncrement = (column as SQLiteColumn & { autoIncrement?: boolean }).autoIncrement === true;
  switch (column.columnType) {
    case 'SQLiteInteger':
      return autoIncrement ? bigserial(name, { mode: 'number' }) : bigint(name, { mode: 'number' });
    case 'SQLiteBoolean':
      return boolean(name);
    case 'SQLiteText':
    case 'SQLiteTextJson':
      return text(name);
    case 'SQLiteReal':
      return doublePrecision(name);
    default:
      throw new Error(`schema-pg: no PostgreSQL type for ${column.columnType} (column ${name})`);
  }
}

function pgColumn(column: SQLiteColumn): PgColumnBuilderBase {
  let builder = pgType(column) as unknown as Builder;
  if (column.primary) builder = builder.primaryKey();
  else if (column.notNull) builder = builder.notNull();
  if (column.isUnique) builder = builder.unique(column.uniqueName);
  if (column.default !== undefined) {
    if (is(column.default, SQL)) builder = builder.default(column.default);
    // A json column's value default is stored as its JSON text, as SQLite's migrations hold it.
    else if (column.columnType === 'SQLiteTextJson') builder = builder.default(literal(JSON.stringify(column.default)));
    else builder = builder.default(column.default);
  }
  return builder as unknown as PgColumnBuilderBase;
}

type PgColumnOf = PgColumn;

function columnOf(table: Record<string, PgColumnOf | undefined>, name: string, where: string): PgColumnOf {
  const column = table[name];
  if (!column) throw new Error(`schema-pg: ${where} has no column ${name}`);
  return column;
}

function pgTableOf(table: SQLiteTable, byName: Map<string, AnyPgTable>): AnyPgTable {
  const config = getTableConfig(table);
  const columns = Object.fromEntries(config.columns.map((column: SQLiteColumn) => [column.name, pgColumn(column)]));
  return pgTable(config.name, columns, (t) => {
    const own = (column: SQLiteColumn | SQL): PgColumnOf => {
      if (is(column, SQL)) throw new Error(`schema-pg: ${config.name} has an index on an expression`);
      return columnOf(t, column.name, config.name);
    };
    const list = (list: (SQLiteColumn | SQL)[]): [PgColumnOf, ...PgColumnOf[]] => {
      const [first, ...rest] = list.map(own);
      if (!first) throw new Error(`schema-pg: ${config.name} has a constraint without columns`);
      return [first, ...rest];
    };
    // An index on an expression (e.g. `lower(name)`) keeps its SQL with each SQLite column swapped for its twin.
    const indexed = (column: SQLiteColumn | SQL): PgColumnOf | SQL =>
      is(column, SQL)
        ? new SQL(
            column.queryChunks.map((chunk) =>
              is(chunk, SQLiteColumnClass) ? columnOf(t, chunk.name, config.name) : chunk,
            ),
          )
        : own(column);
    return [
      ...config.indexes.map(({ config: { name, columns: on, unique: isUnique, where } }) => {
        if (where) throw new Error(`schema-pg: ${name} is a partial index`);
        const [first, ...rest] = on.map(indexed);
        if (!first) throw new Error(`schema-pg: ${name} has no columns`);
        return (isUnique ? uniqueIndex : index)(name).on(first, ...rest);
      }),
      ...config.uniqueConstraints.map((constraint) => unique(constraint.getName()).on(...list(constraint.columns))),
      ...config.primaryKeys.map((key) => primaryKey({ name: key.getName(), columns: list(key.columns) })),
      ...config.foreignKeys.map((key) => {
        const reference = key.reference();
        const targetName = getTableConfig(reference.foreignTable).name;
        const target = byName.get(targetName);
        if (!target) throw new Error(`schema-pg: ${key.getName()} references a table outside schema.ts`);
        const targetColumns = target as unknown as Record<string, PgColumnOf | undefined>;
        const [first, ...rest] = reference.foreignColumns.map((c) => columnOf(targetColumns, c.name, targetName));
        if (!first) throw new Error(`schema-pg: ${key.getName()} has no columns`);
        const foreignColumns: [PgColumnOf, ...PgColumnOf[]] = [first, ...rest];
        let built = foreignKey({ name: key.getName(), columns: list(reference.columns), foreignColumns });
        if (key.onDelete) built = built.onDelete(key.onDelete);
        if (key.onUpdate) built = built.onUpdate(key.onUpdate);
        return built;
      }),
    ];
  });
}

/** Every table of schema.ts, under its export name, as a PostgreSQL table. */
function derive(): Record<keyof typeof sqliteSchema, AnyPgTable> {
  const byName = new Map<string, AnyPgTable>();
  const byExport: Record<string, AnyPgTable> = {};
  for (const [exportName, value] of Object.entries(sqliteSchema)) {
    if (!is(value, SQLiteTable)) continue;
    const pg = pgTableOf(value, byName);
    byName.set(getTableConfig(value).name, pg);
    byExport[exportName] = pg;
  }
  return byExport;
}

export const pgTables = derive();

// drizzle-kit reads the tables from this module's named exports, which cannot be made in a loop;
// schema-pg.test.ts fails when a table of schema.ts is missing here.
export const {
  users,
  accountInvites,
  recoveryCodes,
  sessions,
  signInAttempts,
  signInChallenges,
  secondFactorFailures,
  settings,
  nodes,
  personalAccessTokens,
  domains,
  httpServices,
  tcpServices,
  certificates,
  auditEvents,
  trafficMinutes,
  gateways,
  gatewayPeers,
  certificatePems,
  acmeChallenges,
  leases,
  identityProviders,
  accessPolicies,
  accessShareLinks,
  accessSessions,
  dnsProviders,
  acmeCas,
  acmeAccounts,
  nodeLabelReports,
  notificationChannels,
  notificationDeliveries,
  notificationAlerts,
} = pgTables;
