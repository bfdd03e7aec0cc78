import type { Domain, SslMode } from '@postern/contract';
import { formatDate } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';

// What the 'SSL Certs' column says about a domain: the mode chosen, the state of the certificate actually served
// and until when it is valid. It never claims more than the server reported.

export type CertificateTone = 'green' | 'yellow' | 'red' | 'gray';

export type CertificateSummary = {
  modeLabel: string;
  stateLabel: string;
  tone: CertificateTone;
  /** MM/dd/yyyy (the language's numeric date elsewhere), or null when there is no certificate with an end date. */
  validUntil: string | null;
  /** Why issuance failed, when it did. */
  detail: string | null;
};

// Ids, not texts: read when a summary is made, in the language of that render (the console's README, Languages).
const MODE_LABELS: Record<SslMode, MessageId> = {
  'self-signed': 'domains.ssl.selfSigned',
  certbot: 'domains.ssl.certbot',
  uploaded: 'domains.ssl.uploaded',
};

export function summarizeCertificate(
  { ssl, certificate }: Pick<Domain, 'ssl' | 'certificate'>,
  now: Date = new Date(),
): CertificateSummary {
  const modeLabel = t(MODE_LABELS[ssl]);
  if (!certificate)
    return { modeLabel, stateLabel: t('domains.state.none'), tone: 'gray', validUntil: null, detail: null };

  // The end date of a pending certificate is that of the stand-in served meanwhile, not of the certificate being
  // issued: neither a date nor "Expired" is shown for it.
  if (certificate.state === 'pending')
    return { modeLabel, stateLabel: t('domains.state.pending'), tone: 'gray', validUntil: null, detail: null };
  const validUntil = certificate.notAfter ? formatDate(certificate.notAfter) : null;
  const isExpired = certificate.notAfter !== null && Date.parse(certificate.notAfter) < now.getTime();
  if (isExpired && certificate.state !== 'failed') {
    return { modeLabel, stateLabel: t('domains.state.expired'), tone: 'red', validUntil, detail: null };
  }
  switch (certificate.state) {
    case 'valid':
      return { modeLabel, stateLabel: t('domains.state.valid'), tone: 'green', validUntil, detail: null };
    case 'self-signed':
      // Served and in date, but browsers warn about it. Under Let's Encrypt it is the stand-in until issuance.
      return {
        modeLabel,
        stateLabel: t(ssl === 'certbot' ? 'domains.state.selfSigned' : 'domains.state.active'),
        tone: 'yellow',
        validUntil,
        detail: null,
      };
    case 'failed':
      return { modeLabel, stateLabel: t('domains.state.failed'), tone: 'red', validUntil, detail: certificate.error };
  }
}
