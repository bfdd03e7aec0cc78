import { formatDate, type Certificate, type SslMode } from '@postern/contract';

// An uploaded certificate is never renewed by the gateway (docs/api.md "Certificates"): the operator must upload a
// new one in time, so the certificates view and the domains list warn from this many days before its end.

export const UPLOADED_EXPIRY_WARNING_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The warning for an uploaded certificate that ends soon or has ended; null for every other certificate. */
export function uploadedExpiryWarning(
  ssl: SslMode,
  certificate: Pick<Certificate, 'notAfter'> | null,
  now: Date = new Date(),
): string | null {
  if (ssl !== 'uploaded' || certificate?.notAfter == null) return null;
  const end = Date.parse(certificate.notAfter);
  if (Number.isNaN(end)) return null;
  const left = end - now.getTime();
  if (left <= 0) return `Expired on ${formatDate(certificate.notAfter)}: upload a new certificate`;
  const days = Math.ceil(left / DAY_MS);
  if (days > UPLOADED_EXPIRY_WARNING_DAYS) return null;
  return `Expires in ${days === 1 ? '1 day' : `${String(days)} days`} (${formatDate(certificate.notAfter)}): upload a new certificate`;
}
