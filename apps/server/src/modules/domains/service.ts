import { count, eq, inArray, sql } from 'drizzle-orm';
import type { Domain, DomainCreate, DomainUpdate, ListResponse, PageQuery } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/client.js';
import type { DbExecutor } from '../services/db-executor.js';
import { domains, httpServices, tcpServices } from '../../db/schema.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { applyChanges } from '../../dataplane-apply.js';
import { isUniqueViolation } from '../services/sqlite-errors.js';

type DomainRow = typeof domains.$inferSelect;
type SslMode = DomainRow['ssl'];

/** Outcome of checking that a domain points at this gateway before a certificate is requested for it. */
export type DomainCheckResult = { ok: true } | { ok: false; message: string };
export type DomainCheck = (domain: string) => Promise<DomainCheckResult>;

/**
 * PLACEHOLDER until the certificate work (issue 4) lands: accepts every domain. The real check (DNS answer
 * matches POSTERN_PUBLIC_HOST, or an HTTP token fetched back through the domain) is passed in as `checkDomain`.
 */
export const acceptEveryDomain: DomainCheck = () => Promise.resolve({ ok: true });

export interface DomainOptions {
  checkDomain: DomainCheck;
}

export function toDomain(deps: Pick<AppDeps, 'dataPlane'>, row: DomainRow): Domain {
  return {
    id: row.id,
    domain: row.domain,
    ssl: row.ssl,
    certificate: deps.dataPlane.certificates.info(row.domain) ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** `search` narrows the list to names containing it (the console's domain autocomplete). */
export function listDomains(deps: AppDeps, { page, limit, search }: PageQuery & { search?: string | undefined }): ListResponse<Domain> {
  // instr() instead of LIKE: no wildcard characters to escape in what the operator typed.
  const where = search ? sql`instr(${domains.domain}, ${search.toLowerCase()}) > 0` : undefined;
  const rows = deps.db.select().from(domains).where(where).orderBy(domains.id).limit(limit).offset((page - 1) * limit).all();
  const total = deps.db.select({ n: count() }).from(domains).where(where).get()?.n ?? 0;
  return { data: rows.map((row) => toDomain(deps, row)), page, limit, total };
}

function findDomainRow(db: Db, id: number): DomainRow {
  const row = db.select().from(domains).where(eq(domains.id, id)).get();
  if (!row) throw notFound('Domain');
  return row;
}

export function getDomain(deps: AppDeps, id: number): Domain {
  return toDomain(deps, findDomainRow(deps.db, id));
}

const takenMessage = (domain: string): string => `The domain ${domain} already exists`;

function assertDomainFree(db: Db, domain: string, exceptId?: number): void {
  const other = db.select({ id: domains.id }).from(domains).where(eq(domains.domain, domain)).get();
  if (other && other.id !== exceptId) throw fieldError('domain', takenMessage(domain));
}

/** `skipValidation` forces self-signed (console-spec §5); a certbot domain is checked before it is stored. */
async function resolveSsl(
  options: DomainOptions,
  domain: string,
  ssl: SslMode | null | undefined,
  skipValidation: boolean | undefined,
  needsCheck: boolean,
): Promise<SslMode> {
  if (skipValidation === true) return 'self-signed';
  const mode = ssl ?? 'self-signed';
  if (mode === 'certbot' && needsCheck) {
    const check = await options.checkDomain(domain);
    if (!check.ok) throw fieldError('domain', check.message);
  }
  return mode;
}

export async function createDomain(deps: AppDeps, body: DomainCreate, options: DomainOptions): Promise<Domain> {
  assertDomainFree(deps.db, body.domain);
  const ssl = await resolveSsl(options, body.domain, body.ssl, body.skipValidation, true);
  let row: DomainRow;
  try {
    row = deps.db.insert(domains).values({ domain: body.domain, ssl }).returning().get();
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('domain', takenMessage(body.domain));
    throw error;
  }
  await applyChanges(deps);
  return toDomain(deps, row);
}

export async function updateDomain(deps: AppDeps, id: number, body: DomainUpdate, options: DomainOptions): Promise<Domain> {
  const current = findDomainRow(deps.db, id);
  const name = body.domain ?? current.domain;
  const isRenamed = name !== current.domain;
  if (isRenamed) assertDomainFree(deps.db, name, id);
  const requested = body.ssl === undefined ? current.ssl : body.ssl;
  const needsCheck = isRenamed || current.ssl !== 'certbot';
  const ssl = await resolveSsl(options, name, requested, body.skipValidation, needsCheck);
  const now = deps.now().toISOString();
  let row: DomainRow | undefined;
  try {
    // Services refer to their domain by name, so a rename carries them along in the same transaction.
    row = deps.db.transaction((tx) => {
      if (isRenamed) {
        tx.update(httpServices).set({ domain: name, updatedAt: now }).where(eq(httpServices.domain, current.domain)).run();
        tx.update(tcpServices).set({ domain: name, updatedAt: now }).where(eq(tcpServices.domain, current.domain)).run();
      }
      return tx.update(domains).set({ domain: name, ssl, updatedAt: now }).where(eq(domains.id, id)).returning().get();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('domain', takenMessage(name));
    throw error;
  }
  if (!row) throw notFound('Domain');
  await applyChanges(deps);
  return toDomain(deps, row);
}

function countServicesOn(db: Db, domain: string): number {
  const http = db.select({ n: count() }).from(httpServices).where(eq(httpServices.domain, domain)).get()?.n ?? 0;
  const tcp = db.select({ n: count() }).from(tcpServices).where(eq(tcpServices.domain, domain)).get()?.n ?? 0;
  return http + tcp;
}

/**
 * Refuses while services still use the domain: detaching them would silently move their routes to the default
 * host (where they may collide) or drop their public name, which an operator would not expect from "delete".
 */
export async function deleteDomain(deps: AppDeps, id: number): Promise<void> {
  const current = findDomainRow(deps.db, id);
  const users = countServicesOn(deps.db, current.domain);
  if (users > 0) {
    const what = users === 1 ? '1 service' : `${users} services`;
    throw badRequest(`The domain ${current.domain} is used by ${what}. Delete them or move them to another domain first.`);
  }
  deps.db.delete(domains).where(eq(domains.id, id)).run();
  await applyChanges(deps);
}

/**
 * Creates the Domain entries a service names but that do not exist yet (self-signed, no validation): the console's
 * domain field accepts custom values, and every served name needs a domain entry with a certificate.
 * Runs inside the caller's transaction.
 */
export function ensureDomains(tx: DbExecutor, names: string[]): void {
  const wanted = [...new Set(names.filter((name) => name !== ''))];
  if (wanted.length === 0) return;
  const existing = new Set(
    tx.select({ domain: domains.domain }).from(domains).where(inArray(domains.domain, wanted)).all().map((r) => r.domain),
  );
  const missing = wanted.filter((name) => !existing.has(name));
  if (missing.length > 0) tx.insert(domains).values(missing.map((domain) => ({ domain }))).run();
}
