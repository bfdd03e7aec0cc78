import type { Attention } from '@postern/contract';
import { t } from '../../i18n/i18n';

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
  if (item.problem === 'failed')
    return item.error ? t('certificate.failedWith', { error: item.error }) : t('certificate.failed');
  const end = item.notAfter ? Date.parse(item.notAfter) : Number.NaN;
  if (Number.isNaN(end)) return item.problem === 'expired' ? t('certificate.expired') : t('certificate.endsSoon');
  const days = Math.round(Math.abs(end - now.getTime()) / DAY_MS);
  if (item.problem === 'expired')
    return days === 0 ? t('certificate.expiredToday') : t('certificate.expiredDaysAgo', { days });
  return days === 0 ? t('certificate.endsToday') : t('certificate.endsInDays', { days });
}
