import { formatDate, type Domain, type SslMode } from '@postern/contract';

// What the 'SSL Certs' column says about a domain: the mode chosen, the state of the certificate actually served
// and until when it is valid. It never claims more than the server reported.

export type CertificateTone = 'green' | 'yellow' | 'red' | 'gray';

export type CertificateSummary = {
  modeLabel: string;
  stateLabel: string;
  tone: CertificateTone;
  /** MM/dd/yyyy, or null when there is no certificate with an end date. */
  validUntil: string | null;
  /** Why issuance failed, when it did. */
  detail: string | null;
};

const MODE_LABELS: Record<SslMode, string> = {
  'self-signed': 'Self-signed',
  certbot: "Let's Encrypt",
  uploaded: 'Your own certificate',
};

export function summarizeCertificate(
  { ssl, certificate }: Pick<Domain, 'ssl' | 'certificate'>,
  now: Date = new Date(),
): CertificateSummary {
  const modeLabel = MODE_LABELS[ssl];
  if (!certificate)
    return { modeLabel, stateLabel: 'No certificate yet', tone: 'gray', validUntil: null, detail: null };

  // The end date of a pending certificate is that of the stand-in served meanwhile, not of the certificate being
  // issued: neither a date nor "Expired" is shown for it.
  if (certificate.state === 'pending')
    return { modeLabel, stateLabel: 'Pending', tone: 'gray', validUntil: null, detail: null };
  const validUntil = certificate.notAfter ? formatDate(certificate.notAfter) : null;
  const isExpired = certificate.notAfter !== null && Date.parse(certificate.notAfter) < now.getTime();
  if (isExpired && certificate.state !== 'failed') {
    return { modeLabel, stateLabel: 'Expired', tone: 'red', validUntil, detail: null };
  }
  switch (certificate.state) {
    case 'valid':
      return { modeLabel, stateLabel: 'Valid', tone: 'green', validUntil, detail: null };
    case 'self-signed':
      // Served and in date, but browsers warn about it. Under Let's Encrypt it is the stand-in until issuance.
      return {
        modeLabel,
        stateLabel: ssl === 'certbot' ? 'Self-signed' : 'Active',
        tone: 'yellow',
        validUntil,
        detail: null,
      };
    case 'failed':
      return { modeLabel, stateLabel: 'Failed', tone: 'red', validUntil, detail: certificate.error };
  }
}
