import type { Attention } from '@postern/contract';

// The home page's two faces: onboarding while the gateway holds nothing, then what needs attention.

/** In use: any node besides the gateway's own, any domain or any service. */
export function isGatewayInUse(totals: Attention['totals']): boolean {
  return totals.nodes + totals.domains + totals.httpServices + totals.tcpServices > 0;
}

/** How many things need attention (a drift check that found differences counts once). */
export function countAttention(attention: Attention): number {
  const drift = attention.drift && attention.drift.differences.length > 0 ? 1 : 0;
  return (
    attention.offlineNodes.total +
    attention.backendsDown.total +
    attention.certificates.total +
    attention.setAside.total +
    drift
  );
}

const DAY_MS = 86_400_000;

/** A certificate problem in words: `failed: NXDOMAIN`, `expired 2 days ago`, `ends in 5 days`. */
export function describeCertificateProblem(
  item: Attention['certificates']['items'][number],
  now: Date = new Date(),
): string {
  if (item.problem === 'failed') return item.error ? `issuance failed: ${item.error}` : 'issuance failed';
  const end = item.notAfter ? Date.parse(item.notAfter) : Number.NaN;
  if (Number.isNaN(end)) return item.problem === 'expired' ? 'expired' : 'ends soon';
  const days = Math.round(Math.abs(end - now.getTime()) / DAY_MS);
  const span = days === 0 ? 'today' : `${days} day${days === 1 ? '' : 's'}`;
  if (item.problem === 'expired') return days === 0 ? 'expired today' : `expired ${span} ago`;
  return days === 0 ? 'ends today' : `ends in ${span}`;
}
