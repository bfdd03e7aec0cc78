import { isWildcardDomainName } from '@postern/contract';
import type { DesiredDomain } from '../types.js';
import { assertHost } from '../validate.js';
import { factsOfRecorded, type PemFiles, type RecordedFacts } from './pem-files.js';
import { isDueForRenewal } from './renewal.js';
import type { CertificateStore } from './store.js';

// A restart finds every domain's PEM on disk and its record in the `certificates` table, which says which PEM it is
// (fingerprint), whether it is ours or the CA's and when it expires. Reading and hashing 100,000 PEMs to find them
// as recorded was most of a boot at that size (bench/README.md "apply.ts"), and the push to nginx reads each file
// anyway: so a domain whose record says its PEM serves it as it is, unchanged, is taken as ensured from the record,
// and the push checks each file against the recorded fingerprint as it reads it. A file gone or holding another
// certificate is then ensured the ordinary way (manager.ts `ensure`: loaded from the store every gateway shares, or
// made anew) and pushed. Everything that would make `ensure` do anything else (renewal due, a placeholder waiting for
// the CA, a failed issuance, another certificate stored for every gateway, new order settings, an uploaded
// certificate) goes the ordinary way too.

/** What a certbot domain's order is made with: a change of it orders a new certificate. */
export const orderKey = (domain: DesiredDomain): string =>
  `${domain.challenge ?? 'http-01'} ${String(domain.dnsProviderId ?? '')} ${String(domain.acmeCaId ?? '')}`;

/** A domain's certificate name: a host name, or a wildcard domain (`*.example.com`; its PEM is `*.example.com.pem`). */
export function assertCertificateName(name: string): string {
  return isWildcardDomainName(name) ? name : assertHost(name, 'domain');
}

/** What the store recorded of a name's PEM, when its state says which kind it is (pending or failed: either). */
export function recordedFacts(store: CertificateStore, name: string): RecordedFacts | null {
  const record = store.get(name);
  if (record?.fingerprint == null || (record.state !== 'self-signed' && record.state !== 'valid')) return null;
  const { fingerprint, issuer, notBefore, notAfter } = record;
  return {
    fingerprint,
    issuer,
    notBefore,
    notAfter,
    names: record.names ?? null,
    isSelfSigned: record.state === 'self-signed',
  };
}

export interface RecordedAdoption {
  /** CertificateAdapter.adoptRecorded: the fingerprint the file must have, or null (ensure it). */
  adopt(domain: DesiredDomain): string | null;
  /** CertificateAdapter.confirmRecorded: the files hold the recorded PEMs (their facts cached: no later read). */
  confirm(names: readonly string[]): void;
}

export function createRecordedAdoption(options: {
  pems: PemFiles;
  store: CertificateStore;
  /** The domains ensured (or adopted) since the start, with their mode: the renewal check walks these. */
  known: Map<string, DesiredDomain>;
  now: () => number;
  /** Several gateways share the certificates: the file must be the one stored for every gateway. */
  isShared: boolean;
}): RecordedAdoption {
  const { pems, store, known, now } = options;

  function adopt(domain: DesiredDomain): string | null {
    const name = domain.domain;
    try {
      assertCertificateName(name);
    } catch {
      return null; // ensure reports it
    }
    const previous = known.get(name);
    if (previous !== undefined && (previous.ssl !== domain.ssl || orderKey(previous) !== orderKey(domain))) return null;
    const record = store.get(name);
    if (record?.fingerprint == null || isDueForRenewal(record.notAfter, now())) return null;
    // A self-signed domain's own PEM; a certbot domain's issued one (a placeholder waits for the CA: ensure queues it).
    const isServable =
      (domain.ssl === 'self-signed' && record.state === 'self-signed') ||
      (domain.ssl === 'certbot' && record.state === 'valid');
    if (!isServable) return null;
    if (options.isShared && domain.pemFingerprint !== record.fingerprint) return null;
    known.set(name, domain);
    return record.fingerprint;
  }

  return {
    adopt,
    confirm(names) {
      for (const name of names) {
        const recorded = recordedFacts(store, name);
        if (recorded !== null) pems.remember(name, factsOfRecorded(recorded, pems.coveredNameOf(name)));
      }
    },
  };
}
