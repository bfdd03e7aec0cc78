import type { Certificate, SslMode } from '@postern/contract';
import { formatDate } from '../../i18n/format';
import { t } from '../../i18n/i18n';

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
  if (left <= 0) return t('certs.uploadedExpired', { date: formatDate(certificate.notAfter) });
  const days = Math.ceil(left / DAY_MS);
  if (days > UPLOADED_EXPIRY_WARNING_DAYS) return null;
  return t('certs.uploadedExpiresIn', { days, date: formatDate(certificate.notAfter) });
}
