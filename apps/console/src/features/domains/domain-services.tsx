import type { Certificate, ServiceType } from '@postern/contract';
import { useQueries } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Spinner } from '../../components/ui/spinner';
import { domainViewPrefix } from '../../lib/list-search';
import { serviceListQueryOptions, type ServiceScope } from '../../queries/services';
import { ServiceList, useUrlServiceView } from '../services/service-list';
import type { ServiceFacts } from '../services/service-truth';
import { t, withSlot } from '../../i18n/i18n';

const TYPES: readonly ServiceType[] = ['http', 'tcp'];

/**
 * The expanded row of a domain: its HTTP and TCP services, from every node. Each table's view is in the URL under
 * the domain's id (`d12.httpQ`, …), as the node page's are: Back returns to it and a link shares it.
 */
export function DomainServices({
  domainId,
  domain,
  certificate = null,
}: {
  domainId: number;
  domain: string;
  /** The domain's certificate: every row served over TLS on it is served with it. */
  certificate?: Certificate | null;
}) {
  const scope: ServiceScope = { kind: 'domain', domain };
  const facts: ServiceFacts = { certificate };
  // The first pages are shared with the lists below (same keys), so this costs no extra request.
  const firstPages = useQueries({ queries: TYPES.map((type) => serviceListQueryOptions(type, scope)) });

  if (firstPages.some((page) => page.isPending)) {
    return (
      <div className="flex justify-center py-6">
        <Spinner label={t('domains.services.loading')} />
      </div>
    );
  }
  if (firstPages.every((page) => page.data?.total === 0)) {
    const [before, after] = withSlot('domains.services.none', 'link');
    return (
      <p className="px-4 py-6 text-center text-sm text-gray-600 dark:text-gray-300">
        {before}
        <Link to="/nodes" className="font-medium text-brand-600 hover:underline">
          {t('nav.nodes')}
        </Link>
        {after}
      </p>
    );
  }
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      {TYPES.map((type) => (
        <DomainServiceTable key={type} type={type} scope={scope} domainId={domainId} facts={facts} />
      ))}
    </div>
  );
}

/** The page's h1 is "Domains" and no other heading comes between: these are h2s (heading order, WCAG 1.3.1). */
function DomainServiceTable({
  type,
  scope,
  domainId,
  facts,
}: {
  type: ServiceType;
  scope: ServiceScope;
  domainId: number;
  facts: ServiceFacts;
}) {
  const label = type === 'http' ? 'HTTP' : 'TCP';
  const [view, onViewChange] = useUrlServiceView(type, domainViewPrefix(domainId));
  return (
    <section className="rounded-md border border-gray-200 bg-white dark:border-gray-800 dark:bg-gray-900">
      <h2 className="border-b border-gray-200 px-4 py-2 text-sm font-semibold dark:border-gray-800">
        {t('domains.services.heading', { type: label })}
      </h2>
      <ServiceList
        type={type}
        scope={scope}
        view={view}
        onViewChange={onViewChange}
        facts={facts}
        empty={
          <p className="px-4 py-6 text-center text-sm text-gray-500 dark:text-gray-400">
            {t('domains.services.empty', { type: label })}
          </p>
        }
      />
    </section>
  );
}
