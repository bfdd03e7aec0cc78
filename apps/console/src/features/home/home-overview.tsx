import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Spinner } from '../../components/ui/spinner';
import { formatNumber } from '../../i18n/format';
import { t, withMoreTexts } from '../../i18n/i18n';
import { attentionQueryOptions } from '../../queries/attention';
import { useCurrentAccount } from '../../queries/account';
import { useObserveStream } from '../../queries/observe-stream';
import { AttentionPanel, TotalsPanel } from './attention-panel';
import { isGatewayInUse } from './home-state';
import { HelpLinks, WelcomeCards } from './welcome-cards';

/**
 * The figures and the traffic chart load with the page that shows them: a gateway that holds nothing yet shows the
 * welcome cards, and its first visit stays within the initial JavaScript budget. The panel renders nothing until its
 * data arrives, so waiting for its code looks the same.
 */
const LazySystemStatusPanel = lazy(() =>
  import('../observe/system-status-panel').then((module) => ({ default: module.SystemStatusPanel })),
);

/** An account limited to some nodes: its own page, with the texts of the other screens (not the home page's part). */
const ScopedHome = lazy(() =>
  withMoreTexts(import('./scoped-home')).then((module) => ({ default: module.ScopedHome })),
);

function SystemStatusPanel() {
  return (
    <Suspense fallback={null}>
      <LazySystemStatusPanel />
    </Suspense>
  );
}

/**
 * The home page below its heading: the spec's welcome cards while the gateway holds nothing; once it is in
 * use, what needs attention first, then the totals and the last 24 hours, and the spec's links at the foot.
 */
export function HomeOverview() {
  const account = useCurrentAccount();
  const isLimited = account.data !== undefined && account.data.nodes !== null;
  const query = useQuery({ ...attentionQueryOptions(), enabled: account.data !== undefined && !isLimited });
  useObserveStream();
  // What needs attention, the totals and the gateway's status span every node (docs/api.md "Node scope").
  if (isLimited) {
    const nodeCount = account.data.nodes?.length ?? 0;
    return (
      <>
        <Suspense
          fallback={
            <div className="flex justify-center py-8">
              <Spinner label={t('home.loadingOverview')} />
            </div>
          }
        >
          <ScopedHome nodeCount={nodeCount} shown={formatNumber(nodeCount)} />
        </Suspense>
        <HelpLinks />
      </>
    );
  }
  if (query.isPending) {
    return (
      <div className="flex justify-center py-8">
        <Spinner label={t('home.loadingOverview')} />
      </div>
    );
  }
  if (query.isError) {
    return (
      <>
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          {t('home.attentionFailed')}
        </p>
        <SystemStatusPanel />
        <HelpLinks />
      </>
    );
  }
  if (!isGatewayInUse(query.data.totals)) return <WelcomeCards />;
  return (
    <>
      <AttentionPanel attention={query.data} />
      <TotalsPanel attention={query.data} />
      <SystemStatusPanel />
      <HelpLinks />
    </>
  );
}
