import { eq } from 'drizzle-orm';
import { certificateMessages, type CertificateOverview, type CertificateUpload, type Domain } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { storeCertificatePem } from '../../db/certificate-store.js';
import { acmeCas, dnsProviders, domains } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { badRequest, fieldError, notFound } from '../../errors.js';
import { checkUploadedCertificate } from '../../lib/uploaded-certificate.js';
import { getDomain } from '../domains/service.js';
import { certificateOf, methodOf } from './present.js';

// The certificates view (every domain's certificate: names, issuer, method, expiry, last attempt and error), "renew
// now", and the operator's own certificate (docs/api.md "Certificates").

/** Announced when "renew now" reaches a gateway that does not run issuance: the one that does, renews. */
export const RENEW_TOPIC = 'certificate_renew';

async function overviewRows(deps: AppDeps, id?: number) {
  const query = deps.db
    .select({ row: domains, caName: acmeCas.name, providerName: dnsProviders.name })
    .from(domains)
    .leftJoin(acmeCas, eq(acmeCas.id, domains.acmeCaId))
    .leftJoin(dnsProviders, eq(dnsProviders.id, domains.dnsProviderId));
  return id === undefined ? await query.orderBy(domains.domain).all() : await query.where(eq(domains.id, id)).all();
}

function toOverview(
  deps: AppDeps,
  { row, caName, providerName }: Awaited<ReturnType<typeof overviewRows>>[number],
): CertificateOverview {
  const certificate = certificateOf(deps, row);
  return {
    domainId: row.id,
    domain: row.domain,
    ssl: row.ssl,
    method: methodOf(row),
    names: certificate?.names ?? [row.domain],
    caName: row.ssl === 'certbot' ? caName : null,
    dnsProviderName: methodOf(row) === 'dns-01' ? providerName : null,
    certificate,
  };
}

export async function listCertificates(deps: AppDeps): Promise<CertificateOverview[]> {
  return (await overviewRows(deps)).map((row) => toOverview(deps, row));
}

/**
 * "Renew now": the gateway running issuance asks the CA at once, in the background; the answer shows the domain
 * pending. Through another gateway, the holder of the `certificates` lease is told by an announcement.
 */
export async function renewCertificate(deps: AppDeps, id: number): Promise<CertificateOverview> {
  const [found] = await overviewRows(deps, id);
  if (found === undefined) throw notFound('Domain');
  if (found.row.ssl !== 'certbot') throw badRequest(certificateMessages.renewNotAcme);
  if (deps.dataPlane.certificates.renew?.(found.row.domain) !== true) {
    await deps.db.announce(RENEW_TOPIC, found.row.domain);
  }
  const overview = toOverview(deps, found);
  return overview.certificate === null
    ? overview
    : { ...overview, certificate: { ...overview.certificate, state: 'pending', error: null } };
}

/**
 * The operator's own certificate: checked (key, chain order and signatures, names, validity), stored for every
 * gateway with the domain switched to `uploaded` in one write, then served. No CA renews it.
 */
export async function uploadCertificate(deps: AppDeps, id: number, body: CertificateUpload): Promise<Domain> {
  const row = await deps.db.select().from(domains).where(eq(domains.id, id)).get();
  if (!row) throw notFound('Domain');
  const checked = await checkUploadedCertificate(row.domain, body, deps.now());
  if (!checked.ok) throw fieldError(checked.problem.field, checked.problem.message);
  await deps.db.write(async (tx) => {
    await storeCertificatePem(tx, deps.secrets, id, checked.value.pem);
    await tx
      .update(domains)
      .set({ ssl: 'uploaded', updatedAt: deps.now().toISOString() })
      .where(eq(domains.id, id))
      .run();
  });
  await applyChanges(deps);
  return await getDomain(deps, id);
}
