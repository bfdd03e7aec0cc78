import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Spinner } from '../../components/ui/spinner';
import { t } from '../../i18n/i18n';
import { attentionQueryOptions } from '../../queries/attention';
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
  const query = useQuery(attentionQueryOptions());
  useObserveStream();
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
