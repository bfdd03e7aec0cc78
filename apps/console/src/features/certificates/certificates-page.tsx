import { formatDate, formatRelativeTime, type CertificateMethod, type CertificateOverview } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
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

// The certificates view (beyond the spec; docs/api.md "Certificates"): every domain's certificate with the names it
// covers, its issuer, how it is obtained, its end, the last time a CA was asked and why that failed; "renew now" for
// the certificates a CA issues. DNS providers and CAs are set in Settings, uploads from the domain's row.

const METHOD_LABELS: Record<CertificateMethod, string> = {
  'http-01': 'HTTP-01',
  'dns-01': 'DNS-01',
  uploaded: 'Uploaded',
  'self-signed': 'Self-signed',
};

function methodDetail(row: CertificateOverview): string | null {
  if (row.method === 'dns-01' || row.method === 'http-01') {
    const parts = [row.dnsProviderName, row.caName ?? 'default CA'].filter((part) => part !== null);
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
      toast({ message: `Renewal of ${row.domain} started: the CA is asked now`, type: 'success' });
    } catch (error) {
      // The API layer already showed why (a toast); nothing else to do here.
      console.error('renew certificate failed', error);
    }
  };
  return (
    <Button variant="secondary" isLoading={renew.isPending} onClick={() => void onRenew()}>
      Renew now<span className="sr-only"> the certificate of {row.domain}</span>
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
          <span className="block text-xs break-all text-gray-500 dark:text-gray-400">Also {otherNames.join(', ')}</span>
        )}
        {/* Phones: the method under the name, one column fewer. */}
        <span className="block text-xs text-gray-600 md:hidden dark:text-gray-300">{METHOD_LABELS[row.method]}</span>
      </Td>
      <Td className="hidden align-top whitespace-normal md:table-cell">
        <span>{METHOD_LABELS[row.method]}</span>
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
          {summary.validUntil && <span className="text-xs">until {summary.validUntil}</span>}
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
          <span className="text-gray-500 dark:text-gray-400">Never</span>
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
        <Spinner label="Loading certificates" />
      </div>
    );
  } else if (isError) {
    body = <p className="px-4 py-6 text-sm text-red-700 dark:text-red-300">Could not load the certificates.</p>;
  } else if (data.length === 0) {
    body = (
      <EmptyState
        title="No certificates yet"
        description="Every domain gets a certificate: add a domain under Domain Names."
      />
    );
  } else {
    body = (
      <Table>
        <THead>
          <Th>Names</Th>
          <Th className="hidden md:table-cell">Method</Th>
          <Th className="hidden lg:table-cell">Issuer</Th>
          <Th>Expiry</Th>
          <Th className="hidden sm:table-cell">Last renewal attempt</Th>
          <Th>
            <span className="sr-only">Actions</span>
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
      <h1 className="text-2xl font-bold">Certificates</h1>
      <p className="text-sm text-gray-600 dark:text-gray-300">
        DNS providers and certificate authorities are set in{' '}
        <Link to="/settings" className="font-medium text-brand-600 underline">
          Settings
        </Link>
        ; upload your own certificate from the domain&apos;s menu under{' '}
        <Link to="/domains" className="font-medium text-brand-600 underline">
          Domain Names
        </Link>
        .
      </p>
      <Card>{body}</Card>
    </div>
  );
}
