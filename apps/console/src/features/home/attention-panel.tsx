import { formatRelativeTime, type Attention } from '@postern/contract';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { Badge } from '../../components/ui/card';
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
        Needs attention {count > 0 && <Badge tone="red">{count}</Badge>}
      </h2>
      {count === 0 && (
        <p className="text-sm text-gray-700 dark:text-gray-200">
          Nothing needs your attention: every connected node is online, no backend is down, no certificate failed or
          ends within 14 days, and every change is applied.
        </p>
      )}
      <div className="grid gap-5 md:grid-cols-2">
        <Group
          id="attention-offline-nodes"
          title="Nodes offline"
          total={offlineNodes.total}
          more={
            <Link to="/nodes" search={{ sort: 'status', order: 'asc' }} className={linkClass}>
              Show all {offlineNodes.total} nodes offline
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
                  ? `last handshake ${formatRelativeTime(node.latestHandshakeTimestamp)}`
                  : 'never connected'}
              </Detail>
            </li>
          ))}
        </Group>
        <Group
          id="attention-backends-down"
          title="Backends down"
          total={backendsDown.total}
          more={
            <Link to="/services" search={{ status: 'backend-down' }} className={linkClass}>
              Show all {backendsDown.total} services with their backend down
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
                down{service.since ? ` since ${formatRelativeTime(service.since)}` : ''}
                {service.lastError ? `: ${service.lastError}` : ''}
              </Detail>
            </li>
          ))}
        </Group>
        <Group
          id="attention-certificates"
          title="Certificates"
          total={certificates.total}
          more={
            <Link to="/domains" className={linkClass}>
              Show all domains
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
          title="Changes set aside"
          total={setAside.total}
          more={
            <Link to="/services" search={{ status: 'set-aside' }} className={linkClass}>
              Show all {setAside.total} services set aside
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
              <Detail>not served: {service.applyError}</Detail>
            </li>
          ))}
        </Group>
        {hasDrift && (
          <section aria-labelledby="attention-drift" className="flex flex-col gap-2" data-testid="attention-drift">
            <h3 id="attention-drift" className="text-sm font-semibold">
              Drift
            </h3>
            <p className="text-sm text-gray-700 dark:text-gray-200">
              The check {formatRelativeTime(drift.checkedAt)} found {drift.differences.length} difference
              {drift.differences.length === 1 ? '' : 's'} between the database and what nginx and WireGuard serve
              {drift.repaired ? ', and repaired them.' : '; they are not repaired yet.'}
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
    <nav aria-label="Totals" className="grid grid-cols-3 gap-2 sm:gap-4">
      <Link to="/nodes" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">Nodes</span>
        <span className="text-2xl font-semibold" data-testid="total-nodes">
          {totals.nodes}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {offlineNodes.total === 0 ? 'none offline' : `${offlineNodes.total} offline`}
        </span>
      </Link>
      <Link to="/domains" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">Domains</span>
        <span className="text-2xl font-semibold" data-testid="total-domains">
          {totals.domains}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {attention.certificates.total === 0
            ? 'certificates in order'
            : `${attention.certificates.total} certificate${attention.certificates.total === 1 ? '' : 's'} to look at`}
        </span>
      </Link>
      <Link to="/services" className={tile}>
        <span className="text-sm text-gray-600 dark:text-gray-300">Services</span>
        <span className="text-2xl font-semibold" data-testid="total-services">
          {services}
        </span>
        <span className="text-xs text-gray-600 dark:text-gray-300">
          {totals.httpServices} HTTP · {totals.tcpServices} TCP/UDP
        </span>
      </Link>
    </nav>
  );
}
