import type { HttpService, TcpService } from '@postern/contract';
import { lazy, Suspense, type ReactNode } from 'react';
import { InfoDialog } from '../../components/ui/dialog';
import { describeBackend, isPubliclyExposed } from './service-display';

// The chart and its query load with the dialog, never with the first page.
const ServiceTrafficPanel = lazy(() =>
  import('../observe/service-traffic-panel').then((module) => ({ default: module.ServiceTrafficPanel })),
);

export const SERVICE_EXPOSED_TITLE = 'Your Service is Now Publicly Available';

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-0.5 border-b border-gray-100 pb-2 last:border-0 sm:flex-row sm:justify-between sm:gap-4 dark:border-gray-800">
      <dt className="font-medium text-gray-700 dark:text-gray-200">{label}</dt>
      <dd className="break-all text-gray-600 sm:text-right dark:text-gray-300">{children}</dd>
    </div>
  );
}

/**
 * A service's public address and settings. After a create it is the service-exposed dialog (the spec's "Screens and
 * routes"); from the row menu's Info it shows the same facts under the service's name.
 */
export function ServiceInfoDialog({
  service,
  title,
  onClose,
}: {
  service: HttpService | TcpService | null;
  title?: string;
  onClose: () => void;
}) {
  if (!service) return null;
  const isTls = 'proto' in service ? service.ssl : service.publicAccess.startsWith('https:');
  return (
    <InfoDialog open title={title ?? service.name} onClose={onClose}>
      {title === SERVICE_EXPOSED_TITLE && (
        <p>
          Your service <strong>{service.name}</strong> has been exposed on the network.
        </p>
      )}
      <dl className="flex flex-col gap-2">
        <Row label={`Public Access${isTls ? ' (SSL)' : ''}`}>
          <a href={service.publicAccess} target="_blank" rel="noreferrer" className="text-brand-600 hover:underline">
            {service.publicAccess}
          </a>
        </Row>
        <Row label="Status">{isPubliclyExposed(service) ? 'Public' : service.enabled ? 'Not applied' : 'Disabled'}</Row>
        {service.applyError && <Row label="Gateway error">{service.applyError}</Row>}
        <Row label="Backend">{describeBackend(service)}</Row>
        <Row label="Allowed IPs">
          {service.allowedIps.length > 0 ? service.allowedIps.join(', ') : 'No restrictions'}
        </Row>
        <Row label="Blocked IPs">{service.blockedIps.length > 0 ? service.blockedIps.join(', ') : 'None'}</Row>
      </dl>
      {title !== SERVICE_EXPOSED_TITLE && (
        <Suspense fallback={null}>
          <ServiceTrafficPanel service={service} />
        </Suspense>
      )}
    </InfoDialog>
  );
}
