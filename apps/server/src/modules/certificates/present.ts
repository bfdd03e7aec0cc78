import { isWildcardDomainName, type Certificate, type CertificateMethod } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { domains } from '../../db/schema.js';

type DomainRow = typeof domains.$inferSelect;

/** How a domain's certificate is obtained, as the console shows it. */
export function methodOf(row: Pick<DomainRow, 'domain' | 'ssl' | 'challenge'>): CertificateMethod {
  if (row.ssl === 'self-signed') return 'self-signed';
  if (row.ssl === 'uploaded') return 'uploaded';
  return isWildcardDomainName(row.domain) ? 'dns-01' : row.challenge;
}

/** The data plane's facts about a domain's certificate, with how it is obtained and the names it covers. */
export function certificateOf(
  deps: Pick<AppDeps, 'dataPlane'>,
  row: Pick<DomainRow, 'domain' | 'ssl' | 'challenge'>,
): Certificate | null {
  const info = deps.dataPlane.certificates.info(row.domain);
  if (info === null) return null;
  return {
    state: info.state,
    issuer: info.issuer,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    fingerprint: info.fingerprint,
    error: info.error,
    method: methodOf(row),
    names: info.names ?? [row.domain],
    lastAttemptAt: info.lastAttemptAt ?? null,
  };
}
