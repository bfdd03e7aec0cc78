import { eq } from 'drizzle-orm';
import type { AcmeOrderSettings, AcmeSettingsSource, DnsProviderConfig } from '../model/certificates.js';
import type { SecretBox } from '../secrets.js';
import type { Store } from './client.js';
import { acmeAccounts, acmeCas, dnsProviders, domains } from './schema.js';

// What an ACME order of one domain needs from the database: its CA (its own, else the default row, else
// POSTERN_ACME_DIRECTORY), external account binding, challenge and DNS provider, secrets decrypted here and handed
// only to the issuer; and one account key per CA directory for every gateway on the database (the first gateway
// that needs one stores it, the others use that one).

export interface AcmeDefaults {
  /** POSTERN_ACME_DIRECTORY. */
  directoryUrl: string;
  /** POSTERN_ACME_EMAIL. */
  email?: string | undefined;
}

export function dnsProviderConfig(row: typeof dnsProviders.$inferSelect, secrets: SecretBox): DnsProviderConfig {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    settings: row.settings,
    secret: secrets.decrypt(row.secretEnc),
    propagationTimeoutSeconds: row.propagationTimeoutSeconds,
  };
}

export function openAcmeSettings(db: Store, secrets: SecretBox, defaults: AcmeDefaults): AcmeSettingsSource {
  return {
    async orderSettings(name) {
      const domain = await db.select().from(domains).where(eq(domains.domain, name)).get();
      if (domain === undefined) throw new Error(`the domain ${name} no longer exists`);
      const ca =
        domain.acmeCaId === null
          ? await db.select().from(acmeCas).where(eq(acmeCas.isDefault, true)).get()
          : await db.select().from(acmeCas).where(eq(acmeCas.id, domain.acmeCaId)).get();
      const provider =
        domain.dnsProviderId === null
          ? undefined
          : await db.select().from(dnsProviders).where(eq(dnsProviders.id, domain.dnsProviderId)).get();
      const settings: AcmeOrderSettings = {
        directoryUrl: ca?.directoryUrl ?? defaults.directoryUrl,
        email: ca?.email ?? defaults.email,
        challenge: domain.challenge,
        eab:
          ca?.eabKeyId != null && ca.eabHmacEnc != null
            ? { kid: ca.eabKeyId, hmacKey: secrets.decrypt(ca.eabHmacEnc) }
            : undefined,
        dns: provider === undefined ? undefined : dnsProviderConfig(provider, secrets),
      };
      return settings;
    },

    async accountKey(directoryUrl, create) {
      const read = async (): Promise<Buffer | null> => {
        const row = await db.select().from(acmeAccounts).where(eq(acmeAccounts.directoryUrl, directoryUrl)).get();
        return row === undefined ? null : Buffer.from(secrets.decrypt(row.keyEnc));
      };
      const stored = await read();
      if (stored !== null) return stored;
      const key = await create();
      // First writer wins: a gateway racing this one stored its key first, and every gateway uses that one.
      await db.write(async (tx) => {
        await tx
          .insert(acmeAccounts)
          .values({ directoryUrl, keyEnc: secrets.encrypt(key.toString('utf8')) })
          .onConflictDoNothing()
          .run();
      });
      return (await read()) ?? key;
    },
  };
}
