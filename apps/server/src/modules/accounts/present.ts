import type { Account } from '@postern/contract';
import type { AccountRow } from './repository.js';

/** An account's contract view: never its password hash, second-factor secret or the provider's subject. */
export function toAccount(row: AccountRow, providerName: string | null): Account {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    enabled: row.enabled,
    passwordSignIn: row.passwordSignIn,
    twoFactor: row.totpSecretEnc !== null,
    identity:
      row.identitySubject === null
        ? null
        : { providerId: row.identityProviderId, providerName, email: row.identityEmail },
    lastSignInAt: row.lastSignInAt,
    nodes: row.nodeScope ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
