import type { Attention } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useCallback } from 'react';
import { ExposureStatus } from '../../components/ui/status-dot';
import { useIsKnownToSeeEveryNode } from '../../queries/account';
import { attentionQueryOptions } from '../../queries/attention';
import {
  certificateFactsFromAttention,
  describeServiceTruth,
  nodeFactsFromAttention,
  type ServiceCaveat,
  type ServiceFacts,
} from './service-truth';
import { t, type MessageId } from '../../i18n/i18n';

const CAVEAT_TEXTS: Record<ServiceCaveat, MessageId> = {
  'node disconnected': 'services.caveat.nodeDisconnected',
  'node offline': 'services.caveat.nodeOffline',
  'certificate failed': 'services.caveat.certificateFailed',
  'certificate expired': 'services.caveat.certificateExpired',
};

type ServiceLike = {
  nodeId: number;
  domain: string | null;
  enabled: boolean;
  applyError: string | null;
  /** TCP/UDP services only: whether the gateway terminates TLS (only then has it a certificate). */
  proto?: string;
  ssl?: boolean | string;
};

/** HTTP services on a domain are served with its certificate; TCP services only when the gateway terminates TLS. */
const usesCertificate = (service: ServiceLike): boolean =>
  service.domain !== null && (service.proto === undefined || service.ssl === true);

/**
 * The spec's green or red dot with its word, and beside it what keeps a public service from being reached: its
 * node offline or disconnected, its certificate failed or ended.
 */
export function ServiceStatus({ service, facts }: { service: ServiceLike; facts: ServiceFacts }) {
  const { isExposed, caveats } = describeServiceTruth(service, facts);
  return (
    <span className="inline-flex flex-wrap items-center gap-x-1.5 gap-y-0.5" data-testid="service-status">
      <ExposureStatus isExposed={isExposed} />
      {caveats.map((caveat) => (
        <span
          key={caveat}
          className="rounded bg-orange-100 px-1 text-xs font-medium text-orange-900 dark:bg-orange-900/40 dark:text-orange-200"
        >
          {t(CAVEAT_TEXTS[caveat])}
        </span>
      ))}
    </span>
  );
}

/**
 * The facts of a service the row does not know itself (its node's tunnel, its domain's certificate), from the
 * attention answer every such row shares.
 */
export function useServiceFacts(known: ServiceFacts = {}): (service: ServiceLike) => ServiceFacts {
  // The attention answer spans every node: an account limited to some goes without it (its node facts are known).
  const { data } = useQuery({ ...attentionQueryOptions(), enabled: useIsKnownToSeeEveryNode() });
  return useCallback(
    (service: ServiceLike) => factsFor(data, service, known),
    // `known` is rebuilt by callers on each render; its parts are what matter.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [data, known.node, known.certificate],
  );
}

function factsFor(attention: Attention | undefined, service: ServiceLike, known: ServiceFacts): ServiceFacts {
  return {
    node: known.node ?? nodeFactsFromAttention(attention, service.nodeId),
    certificate: usesCertificate(service)
      ? (known.certificate ?? certificateFactsFromAttention(attention, service.domain))
      : undefined,
  };
}
