import type { Domain } from '@postern/contract';
import { Badge } from '../../components/ui/card';
import { uploadedExpiryWarning } from '../certificates/certificate-expiry';
import { summarizeCertificate } from './certificate-summary';
import { t } from '../../i18n/i18n';

/** The 'SSL Certs' column: mode, state of the served certificate and its end date. */
export function CertificateCell({ domain }: { domain: Domain }) {
  const summary = summarizeCertificate(domain);
  const warning = uploadedExpiryWarning(domain.ssl, domain.certificate);
  return (
    <div className="flex flex-col gap-1 whitespace-normal" title={summary.detail ?? undefined}>
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <span>{summary.modeLabel}</span>
        <Badge tone={summary.tone}>{summary.stateLabel}</Badge>
      </div>
      {summary.validUntil && (
        <span className="text-xs text-gray-500 dark:text-gray-400">
          {t('domains.validUntil', { date: summary.validUntil })}
        </span>
      )}
      {warning && <span className="max-w-xs text-xs text-yellow-800 dark:text-yellow-300">{warning}</span>}
      {summary.detail && (
        <span className="max-w-xs truncate text-xs text-red-600 dark:text-red-400">{summary.detail}</span>
      )}
    </div>
  );
}
