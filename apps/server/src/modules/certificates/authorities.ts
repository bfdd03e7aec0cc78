import { count, eq, ne } from 'drizzle-orm';
import { certificateMessages, type AcmeCa, type AcmeCaCreate, type AcmeCaUpdate } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { Tx, ReadDb } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { acmeCas, domains } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { badRequest, fieldError, notFound } from '../../errors.js';

// ACME certificate authorities (admin only): any directory URL, with external account binding for the CAs that need
// it (ZeroSSL, Google Trust Services). At most one is the default; a domain may name its own. With none configured,
// POSTERN_ACME_DIRECTORY (Let's Encrypt) is the default. The EAB HMAC key is encrypted and never returned.

type Row = typeof acmeCas.$inferSelect;

const takenMessage = (name: string): string => `A certificate authority named ${name} already exists`;

function toAcmeCa(row: Row, uses: number): AcmeCa {
  return {
    id: row.id,
    name: row.name,
    directoryUrl: row.directoryUrl,
    email: row.email,
    eabKeyId: row.eabKeyId,
    hasEabHmacKey: row.eabHmacEnc !== null,
    isDefault: row.isDefault,
    domains: uses,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function usesOf(db: ReadDb, id: number): Promise<number> {
  return (await db.select({ n: count() }).from(domains).where(eq(domains.acmeCaId, id)).get())?.n ?? 0;
}

export async function listAcmeCas(deps: Pick<AppDeps, 'db'>): Promise<AcmeCa[]> {
  const rows = await deps.db.select().from(acmeCas).orderBy(acmeCas.id).all();
  const uses = await deps.db.select({ id: domains.acmeCaId, n: count() }).from(domains).groupBy(domains.acmeCaId).all();
  const byId = new Map(uses.map((row) => [row.id, row.n]));
  return rows.map((row) => toAcmeCa(row, byId.get(row.id) ?? 0));
}

export async function getAcmeCa(deps: Pick<AppDeps, 'db'>, id: number): Promise<AcmeCa> {
  const row = await deps.db.select().from(acmeCas).where(eq(acmeCas.id, id)).get();
  if (!row) throw notFound('Certificate authority');
  return toAcmeCa(row, await usesOf(deps.db, id));
}

/** One default at most: making one the default takes it from the others, in the same write. */
async function clearOtherDefaults(tx: Tx, id: number): Promise<void> {
  await tx.update(acmeCas).set({ isDefault: false }).where(ne(acmeCas.id, id)).run();
}

export async function createAcmeCa(deps: AppDeps, body: AcmeCaCreate): Promise<AcmeCa> {
  try {
    const row = await deps.db.write(async (tx) => {
      const created = await tx
        .insert(acmeCas)
        .values({
          name: body.name,
          directoryUrl: body.directoryUrl,
          email: body.email ?? null,
          eabKeyId: body.eabKeyId ?? null,
          eabHmacEnc: body.eabHmacKey == null ? null : deps.secrets.encrypt(body.eabHmacKey),
          isDefault: body.isDefault ?? false,
        })
        .returning()
        .get();
      if (created.isDefault) await clearOtherDefaults(tx, created.id);
      return created;
    });
    await applyChanges(deps);
    return toAcmeCa(row, 0);
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name));
    throw error;
  }
}

export async function updateAcmeCa(deps: AppDeps, id: number, body: AcmeCaUpdate): Promise<AcmeCa> {
  const current = await deps.db.select().from(acmeCas).where(eq(acmeCas.id, id)).get();
  if (!current) throw notFound('Certificate authority');
  const eabKeyId = body.eabKeyId === undefined ? current.eabKeyId : body.eabKeyId;
  const eabHmacEnc =
    body.eabHmacKey === undefined
      ? current.eabHmacEnc
      : body.eabHmacKey === null
        ? null
        : deps.secrets.encrypt(body.eabHmacKey);
  if ((eabKeyId === null) !== (eabHmacEnc === null)) throw fieldError('eabHmacKey', certificateMessages.eabPair);
  try {
    await deps.db.write(async (tx) => {
      await tx
        .update(acmeCas)
        .set({
          ...(body.name === undefined ? {} : { name: body.name }),
          ...(body.directoryUrl === undefined ? {} : { directoryUrl: body.directoryUrl }),
          ...(body.email === undefined ? {} : { email: body.email }),
          ...(body.isDefault === undefined ? {} : { isDefault: body.isDefault }),
          eabKeyId,
          eabHmacEnc,
          updatedAt: deps.now().toISOString(),
        })
        .where(eq(acmeCas.id, id))
        .run();
      if (body.isDefault === true) await clearOtherDefaults(tx, id);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name ?? current.name));
    throw error;
  }
  await applyChanges(deps);
  return await getAcmeCa(deps, id);
}

export async function deleteAcmeCa(deps: AppDeps, id: number): Promise<void> {
  const current = await deps.db.select().from(acmeCas).where(eq(acmeCas.id, id)).get();
  if (!current) throw notFound('Certificate authority');
  await deps.db.write(async (tx) => {
    const uses = (await tx.select({ n: count() }).from(domains).where(eq(domains.acmeCaId, id)).get())?.n ?? 0;
    if (uses > 0) throw badRequest(certificateMessages.caInUse(current.name, uses));
    await tx.delete(acmeCas).where(eq(acmeCas.id, id)).run();
  });
}
