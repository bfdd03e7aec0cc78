import type { HttpService, TcpService } from '@postern/contract';
import { lazy, Suspense, type ReactNode } from 'react';
import { InfoDialog } from '../../components/ui/dialog';
import { t, withSlot } from '../../i18n/i18n';
import { describeBackend, isPubliclyExposed } from './service-display';

// The chart and its query load with the dialog, never with the first page.
const ServiceTrafficPanel = lazy(() =>
  import('../observe/service-traffic-panel').then((module) => ({ default: module.ServiceTrafficPanel })),
);

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
  isJustExposed = false,
  onClose,
}: {
  service: HttpService | TcpService | null;
  /** Right after a create: the service-exposed dialog's title and sentence, without the traffic (there is none). */
  isJustExposed?: boolean;
  onClose: () => void;
}) {
  if (!service) return null;
  const isTls = 'proto' in service ? service.ssl : service.publicAccess.startsWith('https:');
  const [beforeName, afterName] = withSlot('services.exposedDialog.text', 'name');
  return (
    <InfoDialog open title={isJustExposed ? t('services.exposedDialog.title') : service.name} onClose={onClose}>
      {isJustExposed && (
        <p>
          {beforeName}
          <strong>{service.name}</strong>
          {afterName}
        </p>
      )}
      <dl className="flex flex-col gap-2">
        <Row label={t(isTls ? 'services.info.publicAccessSsl' : 'services.column.publicAccess')}>
          <a href={service.publicAccess} target="_blank" rel="noreferrer" className="text-brand-600 hover:underline">
            {service.publicAccess}
          </a>
        </Row>
        <Row label={t('services.column.status')}>
          {t(
            isPubliclyExposed(service)
              ? 'ui.public'
              : service.enabled
                ? 'services.info.notApplied'
                : 'services.status.disabled',
          )}
        </Row>
        {service.applyError && <Row label={t('services.info.gatewayError')}>{service.applyError}</Row>}
        <Row label={t('services.info.backend')}>{describeBackend(service)}</Row>
        <Row label={t('services.form.allowedIps')}>
          {service.allowedIps.length > 0 ? service.allowedIps.join(', ') : t('services.info.noRestrictions')}
        </Row>
        <Row label={t('services.form.blockedIps')}>
          {service.blockedIps.length > 0 ? service.blockedIps.join(', ') : t('services.info.none')}
        </Row>
      </dl>
      {!isJustExposed && (
        <Suspense fallback={null}>
          <ServiceTrafficPanel service={service} />
        </Suspense>
      )}
    </InfoDialog>
  );
}
