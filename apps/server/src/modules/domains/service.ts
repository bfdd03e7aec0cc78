import { and, count, eq, inArray, like, sql, type SQL } from 'drizzle-orm';
import {
  certificateMessages,
  isWildcardDomainName,
  ruleMessages,
  wildcardOf,
  type Domain,
  type DomainCreate,
  type DomainUpdate,
  type ListResponse,
  type PageQuery,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx, ReadDb } from '../../db/client.js';
import type { Config } from '../../env.js';
import { acmeCas, dnsProviders, domains, httpServices, nodes, tcpServices } from '../../db/schema.js';
import { certificateOf } from '../certificates/present.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { applyChanges } from '../../dataplane-apply.js';
import { streamKey } from '../../model/desired-state.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { preparedPerDb } from '../../db/prepared.js';

type DomainRow = typeof domains.$inferSelect;
type SslMode = DomainRow['ssl'];

/** Outcome of checking that a domain points at this gateway before a certificate is requested for it. */
export type DomainCheckResult = { ok: true } | { ok: false; message: string };
export type DomainCheck = (domain: string) => Promise<DomainCheckResult>;

/**
 * The check when none is passed in (data plane off, API tests): nothing could answer a CA, so every domain is
 * accepted. With the real data plane, main.ts passes `domainCheckFor` (create-data-plane.ts): the DNS answer
 * matches POSTERN_PUBLIC_HOST, or an HTTP token is fetched back through the domain.
 */
export const acceptEveryDomain: DomainCheck = () => Promise.resolve({ ok: true });

export interface DomainOptions {
  checkDomain: DomainCheck;
}

/** A domain row with its owner's name (null: the admin's). */
interface OwnedDomainRow {
  row: DomainRow;
  ownerName: string | null;
}

export function toDomain(deps: Pick<AppDeps, 'dataPlane'>, { row, ownerName }: OwnedDomainRow): Domain {
  return {
    id: row.id,
    domain: row.domain,
    ssl: row.ssl,
    ownerNodeId: row.ownerNodeId,
    ownerNodeName: row.ownerNodeId === null ? null : ownerName,
    certificate: certificateOf(deps, row),
    challenge: row.challenge,
    dnsProviderId: row.dnsProviderId,
    acmeCaId: row.acmeCaId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const selectOwnedDomains = (db: ReadDb) =>
  db.select({ row: domains, ownerName: nodes.name }).from(domains).leftJoin(nodes, eq(nodes.id, domains.ownerNodeId));

/** `column in (…)`, one parameter per node id (a scope is never empty). */
const inNodes = (column: SQL, nodeScope: readonly number[]): SQL =>
  sql`${column} in (${sql.join(
    nodeScope.map((id) => sql`${id}`),
    sql`, `,
  )})`;

/**
 * The domains an account limited to `nodeScope` may see (docs/api.md "Node scope"): those that carry a service of
 * one of its nodes, unless another node owns the domain (its owner's id and name are that node's).
 */
function visibleTo(nodeScope: readonly number[]): SQL {
  const carries = (table: typeof httpServices | typeof tcpServices) =>
    sql`exists (select 1 from ${table} where ${table.domain} = ${domains.domain} and ${inNodes(sql`${table.nodeId}`, nodeScope)})`;
  return sql`(${carries(httpServices)} or ${carries(tcpServices)}) and (${domains.ownerNodeId} is null or ${inNodes(sql`${domains.ownerNodeId}`, nodeScope)})`;
}

/**
 * `search` narrows the list to names containing it (the console's domain autocomplete); `nodeScope`: only the
 * domains the account's node scope shows (null: every domain).
 */
export async function listDomains(
  deps: AppDeps,
  { page, limit, search }: PageQuery & { search?: string | undefined },
  nodeScope: readonly number[] | null = null,
): Promise<ListResponse<Domain>> {
  // instr() instead of LIKE: no wildcard characters to escape in what the operator typed.
  const where = and(
    search ? sql`instr(${domains.domain}, ${search.toLowerCase()}) > 0` : undefined,
    nodeScope === null ? undefined : visibleTo(nodeScope),
  );
  const rows = await selectOwnedDomains(deps.db)
    .where(where)
    .orderBy(domains.id)
    .limit(limit)
    .offset((page - 1) * limit)
    .all();
  const total = (await deps.db.select({ n: count() }).from(domains).where(where).get())?.n ?? 0;
  return { data: rows.map((row) => toDomain(deps, row)), page, limit, total };
}

async function findDomainRow(db: ReadDb, id: number): Promise<DomainRow> {
  const row = await db.select().from(domains).where(eq(domains.id, id)).get();
  if (!row) throw notFound('Domain');
  return row;
}

/** `nodeScope`: a domain that scope does not show is not found (null: every domain). */
export async function getDomain(
  deps: AppDeps,
  id: number,
  nodeScope: readonly number[] | null = null,
): Promise<Domain> {
  const found = await selectOwnedDomains(deps.db)
    .where(and(eq(domains.id, id), nodeScope === null ? undefined : visibleTo(nodeScope)))
    .get();
  if (!found) throw notFound('Domain');
  return toDomain(deps, found);
}

/** The console's own host name serves the console alone: no domain entry, and so no service, may claim it. */
export function assertNotConsoleHost(config: Pick<Config, 'publicHost'>, domain: string): void {
  if (domain === config.publicHost.toLowerCase()) throw fieldError('domain', ruleMessages.consoleHost);
}

/** An owner must be an existing node other than the local one (the gateway's own services are the admin's). */
async function assertOwner(db: ReadDb, ownerNodeId: number | null | undefined): Promise<void> {
  if (ownerNodeId === null || ownerNodeId === undefined) return;
  const owner = await db.select({ isLocal: nodes.isLocal }).from(nodes).where(eq(nodes.id, ownerNodeId)).get();
  if (!owner) throw fieldError('ownerNodeId', ruleMessages.ownerNotFound);
  if (owner.isLocal) throw fieldError('ownerNodeId', ruleMessages.ownerIsLocal);
}

const takenMessage = (domain: string): string => `The domain ${domain} already exists`;

async function assertDomainFree(db: ReadDb, domain: string, exceptId?: number): Promise<void> {
  const other = await db.select({ id: domains.id }).from(domains).where(eq(domains.domain, domain)).get();
  if (other && other.id !== exceptId) throw fieldError('domain', takenMessage(domain));
}

/** How a certbot domain is issued, merged from the request and the row (an edit keeps what it does not name). */
interface IssuanceChoice {
  challenge: 'http-01' | 'dns-01';
  dnsProviderId: number | null;
  acmeCaId: number | null;
}

/**
 * The rules of a domain's certificate settings (docs/api.md "Certificates"): a wildcard is issued through DNS only,
 * dns-01 names an existing DNS provider, a CA override an existing CA.
 */
async function assertIssuance(db: ReadDb, domain: string, ssl: SslMode, choice: IssuanceChoice): Promise<void> {
  if (ssl === 'certbot' && isWildcardDomainName(domain) && choice.challenge !== 'dns-01') {
    throw fieldError('challenge', certificateMessages.wildcardNeedsDns);
  }
  if (ssl === 'certbot' && choice.challenge === 'dns-01' && choice.dnsProviderId === null) {
    throw fieldError('dnsProviderId', certificateMessages.dnsNeedsProvider);
  }
  if (choice.dnsProviderId !== null) {
    const found = await db
      .select({ id: dnsProviders.id })
      .from(dnsProviders)
      .where(eq(dnsProviders.id, choice.dnsProviderId))
      .get();
    if (!found) throw fieldError('dnsProviderId', certificateMessages.providerNotFound);
  }
  if (choice.acmeCaId !== null) {
    const found = await db.select({ id: acmeCas.id }).from(acmeCas).where(eq(acmeCas.id, choice.acmeCaId)).get();
    if (!found) throw fieldError('acmeCaId', certificateMessages.caNotFound);
  }
}

/**
 * `skipValidation` forces self-signed (the spec's "Validation rules"); a certbot domain proven over HTTP is checked to
 * point here before it is stored (a DNS challenge needs no such thing: the gateway may be unreachable from the
 * internet).
 */
async function resolveSsl(
  options: DomainOptions,
  domain: string,
  ssl: SslMode | null | undefined,
  skipValidation: boolean | undefined,
  needsCheck: boolean,
  challenge: IssuanceChoice['challenge'] = 'http-01',
): Promise<SslMode> {
  if (skipValidation === true) return 'self-signed';
  const mode = ssl ?? 'self-signed';
  if (mode === 'certbot' && needsCheck && challenge === 'http-01' && !isWildcardDomainName(domain)) {
    const check = await options.checkDomain(domain);
    if (!check.ok) throw fieldError('domain', check.message);
  }
  return mode;
}

export async function createDomain(deps: AppDeps, body: DomainCreate, options: DomainOptions): Promise<Domain> {
  assertNotConsoleHost(deps.config, body.domain);
  await assertDomainFree(deps.db, body.domain);
  await assertOwner(deps.db, body.ownerNodeId);
  const choice: IssuanceChoice = {
    challenge: body.challenge ?? (isWildcardDomainName(body.domain) ? 'dns-01' : 'http-01'),
    dnsProviderId: body.dnsProviderId ?? null,
    acmeCaId: body.acmeCaId ?? null,
  };
  await assertIssuance(deps.db, body.domain, body.ssl ?? 'self-signed', choice);
  const ssl = await resolveSsl(options, body.domain, body.ssl, body.skipValidation, true, choice.challenge);
  let row: DomainRow;
  try {
    row = await deps.db.write(
      async (tx) =>
        await tx
          .insert(domains)
          .values({ domain: body.domain, ssl, ownerNodeId: body.ownerNodeId ?? null, ...choice })
          .returning()
          .get(),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('domain', takenMessage(body.domain));
    // The owner was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw fieldError('ownerNodeId', ruleMessages.ownerNotFound);
    throw error;
  }
  // Its host and certificate (and, for a wildcard, the names below it): dataplane/README.md "Scoped applies".
  await applyChanges(deps, undefined, { hosts: [row.domain], http: [] });
  return await getDomain(deps, row.id);
}

export async function updateDomain(
  deps: AppDeps,
  id: number,
  body: DomainUpdate,
  options: DomainOptions,
): Promise<Domain> {
  const current = await findDomainRow(deps.db, id);
  const name = body.domain ?? current.domain;
  const isRenamed = name !== current.domain;
  if (isRenamed) {
    assertNotConsoleHost(deps.config, name);
    await assertDomainFree(deps.db, name, id);
  }
  const ownerNodeId = body.ownerNodeId === undefined ? current.ownerNodeId : body.ownerNodeId;
  if (ownerNodeId !== current.ownerNodeId) await assertOwner(deps.db, ownerNodeId);
  const requested = body.ssl === undefined ? current.ssl : body.ssl;
  // `uploaded` is kept, or chosen again, only while the operator's certificate is the one stored for the domain.
  if (requested === 'uploaded' && current.ssl !== 'uploaded') throw fieldError('ssl', certificateMessages.uploadFirst);
  if (requested === 'uploaded' && isRenamed) throw fieldError('domain', certificateMessages.uploadFirst);
  const choice: IssuanceChoice = {
    challenge: body.challenge ?? current.challenge,
    dnsProviderId: body.dnsProviderId === undefined ? current.dnsProviderId : body.dnsProviderId,
    acmeCaId: body.acmeCaId === undefined ? current.acmeCaId : body.acmeCaId,
  };
  await assertIssuance(deps.db, name, requested ?? 'self-signed', choice);
  const needsCheck = isRenamed || current.ssl !== 'certbot' || current.challenge !== choice.challenge;
  const ssl = await resolveSsl(options, name, requested, body.skipValidation, needsCheck, choice.challenge);
  const now = deps.now().toISOString();
  let row: DomainRow | undefined;
  let moved: { id: number; proto: 'tcp' | 'udp'; port: number }[] = [];
  try {
    // Services refer to their domain by name, so a rename carries them along in the same transaction.
    row = await deps.db.write(async (tx) => {
      if (isRenamed) {
        // Their instances serve the domain's name and certificate: replaced, in the same scoped run.
        moved = await tx
          .select({ id: tcpServices.id, proto: tcpServices.proto, port: tcpServices.port })
          .from(tcpServices)
          .where(eq(tcpServices.domain, current.domain))
          .all();
        await tx
          .update(httpServices)
          .set({ domain: name, updatedAt: now })
          .where(eq(httpServices.domain, current.domain))
          .run();
        await tx
          .update(tcpServices)
          .set({ domain: name, updatedAt: now })
          .where(eq(tcpServices.domain, current.domain))
          .run();
      }
      return await tx
        .update(domains)
        .set({ domain: name, ssl, ownerNodeId, ...choice, updatedAt: now })
        .where(eq(domains.id, id))
        .returning()
        .get();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('domain', takenMessage(name));
    if (isForeignKeyViolation(error)) throw fieldError('ownerNodeId', ruleMessages.ownerNotFound);
    throw error;
  }
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- drizzle types get() as the row; no match gives undefined
  if (!row) throw notFound('Domain');
  // A rename leaves the old host (its routes and certificate go) for the new one, with its TCP/UDP services.
  await applyChanges(
    deps,
    undefined,
    isRenamed
      ? {
          hosts: [current.domain, row.domain],
          http: [],
          streams: moved.map((service) => streamKey(service.proto, service.port)),
          tcp: moved.map((service) => service.id),
        }
      : { hosts: [row.domain], http: [] },
  );
  return await getDomain(deps, row.id);
}

/** Names one label below a wildcard's base (`%.example.com`), narrowed to those it covers in code. */
const belowWildcard = (wildcard: string): string => `%.${wildcard.slice(2)}`;

/** Web services on names a wildcard domain covers that have no domain of their own: they are served under it. */
async function servicesCoveredOnly(db: ReadDb, wildcard: string): Promise<number> {
  const candidates = await db
    .select({ domain: httpServices.domain })
    .from(httpServices)
    .where(like(httpServices.domain, belowWildcard(wildcard)))
    .all();
  const covered = [...new Set(candidates.map((c) => c.domain))].filter((name) => wildcardOf(name) === wildcard);
  if (covered.length === 0) return 0;
  const own = new Set(
    (await db.select({ domain: domains.domain }).from(domains).where(inArray(domains.domain, covered)).all()).map(
      (r) => r.domain,
    ),
  );
  return candidates.filter((c) => covered.includes(c.domain) && !own.has(c.domain)).length;
}

async function countServicesOn(db: ReadDb, domain: string): Promise<number> {
  const covered = isWildcardDomainName(domain) ? await servicesCoveredOnly(db, domain) : 0;
  const http =
    covered +
    ((await db.select({ n: count() }).from(httpServices).where(eq(httpServices.domain, domain)).get())?.n ?? 0);
  const tcp = (await db.select({ n: count() }).from(tcpServices).where(eq(tcpServices.domain, domain)).get())?.n ?? 0;
  return http + tcp;
}

/**
 * Refuses while services still use the domain: detaching them would silently move their routes to the default
 * host (where they may collide) or drop their public name, which an operator would not expect from "delete".
 */
export async function deleteDomain(deps: AppDeps, id: number): Promise<void> {
  const current = await findDomainRow(deps.db, id);
  const users = await countServicesOn(deps.db, current.domain);
  if (users > 0) {
    const what = users === 1 ? '1 service' : `${users} services`;
    throw badRequest(
      `The domain ${current.domain} is used by ${what}. Delete them or move them to another domain first.`,
    );
  }
  await deps.db.write(async (tx) => await tx.delete(domains).where(eq(domains.id, id)).run());
  // Its host (no routes: no service uses it) and its certificate go.
  await applyChanges(deps, undefined, { hosts: [current.domain], http: [] });
}

// A service on a new domain adds its row: prepared once per connection (db/prepared.ts), not built by drizzle per call.
const insertDomainQuery = preparedPerDb((tx: Tx) =>
  tx
    .insert(domains)
    .values({ domain: sql.placeholder('domain'), ownerNodeId: sql.placeholder('ownerNodeId') })
    .prepare(),
);

/**
 * Creates the Domain entry a service names (self-signed, no validation), which the caller's transaction has just read
 * as missing: the console's domain field accepts custom values, and every served name needs a domain entry with a
 * certificate. It belongs to `ownerNodeId` (null: the admin).
 */
export async function insertMissingDomain(tx: Tx, name: string, ownerNodeId: number | null = null): Promise<void> {
  await insertDomainQuery(tx).run({ domain: name, ownerNodeId });
}
