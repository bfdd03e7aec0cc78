import { useQuery } from '@tanstack/react-query';
import { Spinner } from '../../components/ui/spinner';
import { attentionQueryOptions } from '../../queries/attention';
import { useObserveStream } from '../../queries/observe-stream';
import { SystemStatusPanel } from '../observe/system-status-panel';
import { AttentionPanel, TotalsPanel } from './attention-panel';
import { isGatewayInUse } from './home-state';
import { HelpLinks, WelcomeCards } from './welcome-cards';

/**
 * The home page below its heading (issue 26): the spec's welcome cards while the gateway holds nothing; once it is in
 * use, what needs attention first, then the totals and the last 24 hours, and the spec's links at the foot.
 */
export function HomeOverview() {
  const query = useQuery(attentionQueryOptions());
  useObserveStream();
  if (query.isPending) {
    return (
      <div className="flex justify-center py-8">
        <Spinner label="Loading the overview" />
      </div>
    );
  }
  if (query.isError) {
    return (
      <>
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          What needs attention could not be loaded. Check your connection and reload the page.
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
