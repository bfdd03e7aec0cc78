import type { Attention } from '@postern/contract';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { Badge } from '../../components/ui/card';
import { formatNumber, formatRelativeTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import { serviceOnNodeSearch } from '../../lib/list-search';
import { countAttention, describeCertificateProblem } from './home-state';

// "Needs attention": offline nodes, backends down, certificates failing or ending, changes the data plane
// set aside, and drift, each with a link to where it is fixed. A few of each; "Show all" leads to the full list.

const SHOWN = 5;
const linkClass = 'font-medium text-brand-600 hover:underline dark:text-blue-400';

function Group({
  id,
  title,
  total,
  more,
  children,
}: {
  id: string;
  title: string;
  total: number;
  more?: ReactNode;
  children: ReactNode;
}) {
  if (total === 0) return null;
  return (
    <section aria-labelledby={id} className="flex flex-col gap-2" data-testid={id}>
      <h3 id={id} className="flex items-center gap-2 text-sm font-semibold">
        {title} <Badge tone="red">{total}</Badge>
      </h3>
      <ul className="flex flex-col gap-1.5 text-sm">{children}</ul>
      {total > SHOWN && more}
    </section>
  );
}

const Detail = ({ children }: { children: ReactNode }) => (
  <span className="text-gray-600 break-words dark:text-gray-300">{children}</span>
);

export function AttentionPanel({ attention }: { attention: Attention }) {
  const count = countAttention(attention);
  const { offlineNodes, backendsDown, certificates, setAside, drift } = attention;
  const hasDrift = drift !== null && drift.differences.length > 0;
  return (
    <section
      aria-labelledby="attention-title"
      data-testid="attention"
      className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-5 shadow-sm dark:border-gray-800 dark:bg-gray-900"
    >
      <h2 id="attention-title" className="flex items-center gap-2 text-base font-semibold">
        {t('attention.title')} {count > 0 && <Badge tone="red">{count}</Badge>}
      </h2>
      {count === 0 && <p className="text-sm text-gray-700 dark:text-gray-200">{t('attention.nothing')}</p>}
      <div className="grid gap-5 md:grid-cols-2">
        <Group
          id="attention-offline-nodes"
          title={t('attention.nodesOffline')}
          total={offlineNodes.total}
          more={
            <Link to="/nodes" search={{ sort: 'status', order: 'asc' }} className={linkClass}>
              {t('attention.showNodesOffline', { count: offlineNodes.total })}
            </Link>
          }
        >
          {offlineNodes.items.slice(0, SHOWN).map((node) => (
            <li key={node.id} className="flex flex-wrap gap-x-2">
              <Link to="/nodes/$id" params={{ id: String(node.id) }} className={linkClass}>
                {node.name}
              </Link>
              <Detail>
                {node.latestHandshakeTimestamp
                  ? t('attention.lastHandshake', { when: formatRelativeTime(node.latestHandshakeTimestamp) })
                  : t('attention.neverConnected')}
              </Detail>
            </li>
          ))}
        </Group>
        <Group
          id="attention-backends-down"
          title={t('attention.backendsDown')}
          total={backendsDown.total}
          more={
            <Link to="/services" search={{ status: 'backend-down' }} className={linkClass}>
              {t('attention.showBackendsDown', { count: backendsDown.total })}
            </Link>
          }
        >
          {backendsDown.items.slice(0, SHOWN).map((service) => (
            <li key={`${service.type}:${service.id}`} className="flex flex-wrap gap-x-2">
              <Link
                to="/nodes/$id"
                params={{ id: String(service.nodeId) }}
                search={serviceOnNodeSearch(service)}
                className={linkClass}
              >
                {service.name} on {service.nodeName}
              </Link>
              <Detail>
                {service.since
                  ? t('attention.downSince', { when: formatRelativeTime(service.since) })
                  : t('attention.down')}
                {service.lastError ? t('attention.withError', { error: service.lastError }) : ''}
              </Detail>
            </li>
          ))}
        </Group>
        <Group
          id="attention-certificates"
          title={t('nav.certificates')}
          total={certificates.total}
          more={
            <Link to="/domains" className={linkClass}>
              {t('attention.showDomains')}
            </Link>
          }
        >
          {certificates.items.slice(0, SHOWN).map((item) => (
            <li key={item.id} className="flex flex-wrap gap-x-2">
              <Link to="/domains" search={{ q: item.domain }} className={linkClass}>
                {item.domain}
              </Link>
              <Detail>{describeCertificateProblem(item)}</Detail>
            </li>
          ))}
        </Group>
        <Group
          id="attention-set-aside"
          title={t('attention.setAside')}
          total={setAside.total}
          more={
            <Link to="/services" search={{ status: 'set-aside' }} className={linkClass}>
              {t('attention.showSetAside', { count: setAside.total })}
            </Link>
          }
        >
          {setAside.items.slice(0, SHOWN).map((service) => (
            <li key={`${service.type}:${service.id}`} className="flex flex-wrap gap-x-2">
              <Link
                to="/nodes/$id"
                params={{ id: String(service.nodeId) }}
                search={serviceOnNodeSearch(service)}
                className={linkClass}
              >
                {service.name} on {service.nodeName}
              </Link>
              <Detail>{t('attention.notServed', { error: service.applyError })}</Detail>
            </li>
          ))}
        </Group>
        {hasDrift && (
          <section aria-labelledby="attention-drift" className="flex flex-col gap-2" data-testid="attention-drift">
            <h3 id="attention-drift" className="text-sm font-semibold">
              {t('attention.drift')}
            </h3>
            <p className="text-sm text-gray-700 dark:text-gray-200">
              {t('attention.driftText', {
                when: formatRelativeTime(drift.checkedAt),
                count: drift.differences.length,
                repaired: drift.repaired ? 'yes' : 'no',
              })}
            </p>
          </section>
        )}
      </div>
    </section>
  );
}

/** Nodes, domains and services: how many, each a link to its list. */
export function TotalsPanel({ attention }: { attention: Attention }) {
  const { totals, offlineNodes } = attention;
  const services = totals.httpServices + totals.tcpServices;
  const tile =
    'flex flex-col gap-1 rounded-lg border border-gray-200 bg-white p-3 shadow-sm hover:border-brand-600 sm:p-4 dark:border-gray-800 dark:bg-gray-900 dark:hover:border-blue-400';
  return (
    <nav aria-label={t('totals.label')} className="grid grid-cols-3 gap-2 sm:gap-4">
      <Link to="/nodes" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">{t('totals.nodes')}</span>
        <span className="text-2xl font-semibold" data-testid="total-nodes">
          {totals.nodes}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {offlineNodes.total === 0
            ? t('totals.noneOffline')
            : t('totals.offline', { count: formatNumber(offlineNodes.total) })}
        </span>
      </Link>
      <Link to="/domains" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">{t('totals.domains')}</span>
        <span className="text-2xl font-semibold" data-testid="total-domains">
          {totals.domains}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {attention.certificates.total === 0
            ? t('totals.certificatesInOrder')
            : t('totals.certificatesToLookAt', { count: attention.certificates.total })}
        </span>
      </Link>
      <Link to="/services" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">{t('nav.services')}</span>
        <span className="text-2xl font-semibold" data-testid="total-services">
          {services}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {t('totals.serviceKinds', { http: formatNumber(totals.httpServices), tcp: formatNumber(totals.tcpServices) })}
        </span>
      </Link>
    </nav>
  );
}
