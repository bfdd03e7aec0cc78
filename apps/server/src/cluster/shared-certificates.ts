import { eq } from 'drizzle-orm';
import { joinPem } from '../lib/pem.js';
import type { SharedCertificates } from '../model/certificates.js';
import type { SecretBox } from '../secrets.js';
import { storeCertificatePem } from '../db/certificate-store.js';
import type { Tx, ReadDb, Store } from '../db/client.js';
import { certificatePems, domains } from '../db/schema.js';

// The certificates every gateway on one database serves (`certificate_pems`): one combined PEM per domain, the first
// self-signed one stored winning a race, the CA's replacing it. A change is announced, so the other gateways load it
// at once (their data plane's apply). Private keys are stored encrypted with the secret key; nothing here is logged.
// The HTTP-01 answers every gateway gives are acme-answers.ts.

export function openSharedCertificates(db: Store, secrets: SecretBox): SharedCertificates {
  const announce = (): Promise<void> => db.announce().catch(() => undefined);

  async function domainIdOf(tx: ReadDb, name: string): Promise<number | null> {
    const row = await tx.select({ id: domains.id }).from(domains).where(eq(domains.domain, name)).get();
    return row?.id ?? null;
  }

  async function readStored(tx: ReadDb, domainId: number): Promise<{ fingerprint: string; pem: string } | null> {
    const row = await tx.select().from(certificatePems).where(eq(certificatePems.domainId, domainId)).get();
    if (row === undefined) return null;
    return { fingerprint: row.fingerprint, pem: joinPem(secrets.decrypt(row.keyEnc), row.chain) };
  }

  const store = (tx: Tx, domainId: number, pem: string) => storeCertificatePem(tx, secrets, domainId, pem);

  return {
    async load(name) {
      const id = await domainIdOf(db, name);
      return id === null ? null : ((await readStored(db, id))?.pem ?? null);
    },

    async offer(name, pem, replacing) {
      const outcome = await db.write(async (tx) => {
        const id = await domainIdOf(tx, name);
        if (id === null) return { pem: null, stored: false };
        const current = await readStored(tx, id);
        if (current !== null && current.fingerprint !== replacing) return { pem: current.pem, stored: false };
        await store(tx, id, pem);
        return { pem, stored: true };
      });
      if (outcome.stored) await announce();
      return outcome.pem;
    },

    async put(name, pem) {
      const isStored = await db.write(async (tx) => {
        const id = await domainIdOf(tx, name);
        if (id !== null) await store(tx, id, pem);
        return id !== null;
      });
      if (isStored) await announce();
    },
  };
}
