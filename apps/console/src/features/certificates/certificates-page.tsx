import type { CertificateMethod, CertificateOverview } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from '@tanstack/react-router';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { Spinner } from '../../components/ui/spinner';
import { Table, TBody, Td, Th, THead, Tr } from '../../components/ui/table';
import { useToast } from '../../components/ui/toast';
import { certificateListQueryOptions, useRenewCertificate } from '../../queries/certificates';
import { summarizeCertificate } from '../domains/certificate-summary';
import { uploadedExpiryWarning } from './certificate-expiry';
import { formatDate, formatRelativeTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';

// The certificates view (beyond the spec; docs/api.md "Certificates"): every domain's certificate with the names it
// covers, its issuer, how it is obtained, its end, the last time a CA was asked and why that failed; "renew now" for
// the certificates a CA issues. DNS providers and CAs are set in Settings, uploads from the domain's row.

/** The method's name: the challenges are protocol names, the others texts read in the language of this render. */
function methodLabel(method: CertificateMethod): string {
  switch (method) {
    case 'http-01':
      return 'HTTP-01';
    case 'dns-01':
      return 'DNS-01';
    case 'uploaded':
      return t('certs.method.uploaded');
    case 'self-signed':
      return t('domains.ssl.selfSigned');
  }
}

/** The intro with its two links placed where the language puts them. */
function Intro() {
  const links: Record<string, ReactNode> = {
    '\uE000': (
      <Link key="settings" to="/settings" className="font-medium text-brand-600 underline">
        {t('nav.settings')}
      </Link>
    ),
    '\uE001': (
      <Link key="domains" to="/domains" className="font-medium text-brand-600 underline">
        {t('nav.domains')}
      </Link>
    ),
  };
  const text = t('certs.intro', { settings: '\uE000', domains: '\uE001' });
  return (
    <p className="text-sm text-gray-600 dark:text-gray-300">
      {text.split(/(\uE000|\uE001)/).map((part) => links[part] ?? part)}
    </p>
  );
}

function methodDetail(row: CertificateOverview): string | null {
  if (row.method === 'dns-01' || row.method === 'http-01') {
    const parts = [row.dnsProviderName, row.caName ?? t('certs.defaultCa')].filter((part) => part !== null);
    return parts.join(' · ');
  }
  return null;
}

function RenewButton({ row }: { row: CertificateOverview }) {
  const renew = useRenewCertificate();
  const { toast } = useToast();
  if (row.ssl !== 'certbot') return null;
  const onRenew = async () => {
    try {
      await renew.mutateAsync(row.domainId);
      toast({ message: t('certs.renewStarted', { domain: row.domain }), type: 'success' });
    } catch (error) {
      // The API layer already showed why (a toast); nothing else to do here.
      console.error('renew certificate failed', error);
    }
  };
  return (
    <Button variant="secondary" isLoading={renew.isPending} onClick={() => void onRenew()}>
      {t('certs.renewNow')}
      <span className="sr-only"> {t('certs.renewWhich', { domain: row.domain })}</span>
    </Button>
  );
}

function CertificateRow({ row, now }: { row: CertificateOverview; now: Date }) {
  const summary = summarizeCertificate(row, now);
  const warning = uploadedExpiryWarning(row.ssl, row.certificate, now);
  const detail = methodDetail(row);
  const lastAttempt = row.certificate?.lastAttemptAt ?? null;
  const otherNames = row.names.filter((name) => name !== row.domain);
  return (
    <Tr>
      <Td className="align-top whitespace-normal">
        <span className="font-medium break-all">{row.domain}</span>
        {otherNames.length > 0 && (
          <span className="block text-xs break-all text-gray-500 dark:text-gray-400">
            {t('certs.also', { names: otherNames.join(', ') })}
          </span>
        )}
        {/* Phones: the method under the name, one column fewer. */}
        <span className="block text-xs text-gray-600 md:hidden dark:text-gray-300">{methodLabel(row.method)}</span>
      </Td>
      <Td className="hidden align-top whitespace-normal md:table-cell">
        <span>{methodLabel(row.method)}</span>
        {detail && <span className="block text-xs text-gray-500 dark:text-gray-400">{detail}</span>}
      </Td>
      <Td className="hidden max-w-56 align-top whitespace-normal break-words lg:table-cell">
        {row.certificate?.issuer ?? '-'}
      </Td>
      <Td className="align-top whitespace-normal">
        <div className="flex flex-wrap items-center gap-2">
          <Badge tone={warning ? (summary.tone === 'red' ? 'red' : 'yellow') : summary.tone}>
            {summary.stateLabel}
          </Badge>
          {summary.validUntil && <span className="text-xs">{t('certs.until', { date: summary.validUntil })}</span>}
        </div>
        {warning && <p className="mt-1 max-w-xs text-xs text-yellow-800 dark:text-yellow-300">{warning}</p>}
        {/* The last attempt's error, also while the certificate in use is still valid (a renewal that failed). */}
        {row.certificate?.error && (
          <p className="mt-1 max-w-xs text-xs break-words text-red-700 dark:text-red-300">{row.certificate.error}</p>
        )}
      </Td>
      <Td className="hidden align-top whitespace-normal sm:table-cell">
        {lastAttempt ? (
          <time dateTime={lastAttempt} title={formatDate(lastAttempt)}>
            {formatRelativeTime(lastAttempt, now)}
          </time>
        ) : (
          <span className="text-gray-500 dark:text-gray-400">{t('certs.never')}</span>
        )}
      </Td>
      <Td className="text-right align-top">
        <RenewButton row={row} />
      </Td>
    </Tr>
  );
}

export function CertificatesPage() {
  const { data, isPending, isError } = useQuery(certificateListQueryOptions());
  const now = new Date();
  let body;
  if (isPending) {
    body = (
      <div className="flex justify-center py-8">
        <Spinner label={t('certs.loading')} />
      </div>
    );
  } else if (isError) {
    body = <p className="px-4 py-6 text-sm text-red-700 dark:text-red-300">{t('certs.loadError')}</p>;
  } else if (data.length === 0) {
    body = <EmptyState title={t('certs.empty')} description={t('certs.emptyHint')} />;
  } else {
    body = (
      <Table>
        <THead>
          <Th>{t('certs.column.names')}</Th>
          <Th className="hidden md:table-cell">{t('certs.column.method')}</Th>
          <Th className="hidden lg:table-cell">{t('certs.column.issuer')}</Th>
          <Th>{t('certs.column.expiry')}</Th>
          <Th className="hidden sm:table-cell">{t('certs.column.lastAttempt')}</Th>
          <Th>
            <span className="sr-only">{t('ui.actions')}</span>
          </Th>
        </THead>
        <TBody>
          {data.map((row) => (
            <CertificateRow key={row.domainId} row={row} now={now} />
          ))}
        </TBody>
      </Table>
    );
  }
  return (
    <div className="flex flex-col gap-6">
      <h1 className="text-2xl font-bold">{t('nav.certificates')}</h1>
      <Intro />
      <Card>{body}</Card>
    </div>
  );
}
