import { and, count, eq, ne } from 'drizzle-orm';
import type { Role } from '@postern/contract';
import type { Tx, ReadDb } from '../../db/client.js';
import { users } from '../../db/schema.js';

// The one way an account row is made: the role is always named (the column's default is the least privileged role,
// there only for rows made before roles existed).

export type AccountRow = typeof users.$inferSelect;

export interface NewAccount {
  username: string;
  passwordHash: string;
  role: Role;
  /** False: the account signs in only through its bound identity. */
  passwordSignIn: boolean;
  identity?: { providerId: number; issuer: string; subject: string; email: string | null };
}

export async function insertAccount(tx: Tx, account: NewAccount): Promise<AccountRow> {
  const { identity } = account;
  return await tx
    .insert(users)
    .values({
      username: account.username,
      passwordHash: account.passwordHash,
      role: account.role,
      passwordSignIn: account.passwordSignIn,
      ...(identity && {
        identityProviderId: identity.providerId,
        identityIssuer: identity.issuer,
        identitySubject: identity.subject,
        identityEmail: identity.email,
      }),
    })
    .returning()
    .get();
}

export async function findAccount(db: ReadDb, id: number): Promise<AccountRow | undefined> {
  return await db.select().from(users).where(eq(users.id, id)).get();
}

/** Enabled owners other than `exceptId`: an owner may be removed, demoted or disabled only while this is above 0. */
export async function otherEnabledOwners(db: ReadDb, exceptId: number): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, 'owner'), eq(users.enabled, true), ne(users.id, exceptId)))
    .get();
  return row?.n ?? 0;
}
