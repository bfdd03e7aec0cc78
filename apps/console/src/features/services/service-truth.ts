import type { Attention, NodeStatusValue } from '@postern/contract';
import { isPubliclyExposed } from './service-display';

// Status that tells the truth: a service switched on and accepted by the data plane is "Public" only as
// far as its node and certificate allow. A disconnected node serves nothing (not public); an offline node or a failed
// or ended certificate leaves it published but unreachable or untrusted, which the row says next to "Public".

/** What a row knows about the service's node; undefined: nothing known. */
export type NodeFacts = { status: NodeStatusValue; enabled: boolean; isLocal: boolean };
/** The certificate the service is served with (its domain's); null or undefined: none or unknown. */
export type CertificateFacts = { state: string; notAfter: string | null };

export type ServiceFacts = { node?: NodeFacts | undefined; certificate?: CertificateFacts | null | undefined };

/** Why a public service may not be reached; the row shows it in the operator's language (service-status.tsx). */
export type ServiceCaveat = 'node disconnected' | 'node offline' | 'certificate failed' | 'certificate expired';

export type ServiceTruth = {
  /** The spec's green dot: switched on, accepted, and its node connected. */
  isExposed: boolean;
  /** Why a public service may still not be reached (shown beside "Public"), or why it is not public. */
  caveats: ServiceCaveat[];
};

type ServiceLike = { enabled: boolean; applyError: string | null };

export function describeServiceTruth(service: ServiceLike, facts: ServiceFacts, now: Date = new Date()): ServiceTruth {
  const node = facts.node && !facts.node.isLocal ? facts.node : undefined;
  if (!isPubliclyExposed(service)) return { isExposed: false, caveats: [] };
  if (node && !node.enabled) return { isExposed: false, caveats: ['node disconnected'] };
  const caveats: ServiceCaveat[] = [];
  if (node?.status === 'offline') caveats.push('node offline');
  const certificate = facts.certificate;
  if (certificate?.state === 'failed') caveats.push('certificate failed');
  else if (certificate?.notAfter && Date.parse(certificate.notAfter) < now.getTime())
    caveats.push('certificate expired');
  return { isExposed: true, caveats };
}

/** The facts the attention answer holds about a node (offline, disconnected), when the row has none of its own. */
export function nodeFactsFromAttention(attention: Attention | undefined, nodeId: number): NodeFacts | undefined {
  if (!attention) return undefined;
  if (attention.disconnectedNodeIds.includes(nodeId)) return { status: 'offline', enabled: false, isLocal: false };
  if (attention.offlineNodes.items.some((node) => node.id === nodeId))
    return { status: 'offline', enabled: true, isLocal: false };
  return undefined;
}

/** A failed or ended certificate of `domain`, as the attention answer lists it. */
export function certificateFactsFromAttention(
  attention: Attention | undefined,
  domain: string | null,
): CertificateFacts | undefined {
  if (!attention || !domain) return undefined;
  const listed = attention.certificates.items.find((item) => item.domain === domain);
  if (!listed || listed.problem === 'expiring') return undefined;
  return { state: listed.problem === 'failed' ? 'failed' : 'valid', notAfter: listed.notAfter };
}
