import { and, desc, eq, lt } from 'drizzle-orm';
import type { ReadDb } from '../../db/client.js';
import { auditEvents } from '../../db/schema.js';
import { clientKeyOf } from '../auth/rate-limit.js';

// "Sign-in from a new address": an account's earlier sign-ins are in the audit log (kept
// POSTERN_AUDIT_RETENTION_DAYS), so no table of its own is needed, and an upgrade knows the addresses already used.
// Addresses compare as the sign-in limiter counts clients: IPv4 one by one, IPv6 per /64 (privacy addresses change
// daily within one).

/** Earlier sign-ins looked at: an account signing in from more addresses than this within the retention is rare. */
const LOOK_BACK = 1000;

export async function isNewSignInAddress(
  db: ReadDb,
  username: string,
  address: string,
  entryId: number,
): Promise<boolean> {
  const key = clientKeyOf(address);
  const earlier = await db
    .select({ address: auditEvents.address })
    .from(auditEvents)
    .where(
      and(eq(auditEvents.action, 'auth.sign-in'), eq(auditEvents.actorName, username), lt(auditEvents.id, entryId)),
    )
    .orderBy(desc(auditEvents.id))
    .limit(LOOK_BACK)
    .all();
  return !earlier.some((row) => row.address !== null && clientKeyOf(row.address) === key);
}
