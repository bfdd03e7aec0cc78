import type { AccessPolicy, ServiceAccess } from '@postern/contract';
import { formatDuration } from './access-form-rules';
import { formatNumber } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';

// A policy in words, for the Access section's "inherits" line and the Visitor Access dialog.

const count = (n: number, id: MessageId): string => t(id, { count: n, n: formatNumber(n) });

/** Who the single sign-on lets in: "2 emails, 1 email domain". */
function describeAllowList(policy: AccessPolicy): string {
  const parts = [
    policy.allowEmails.length > 0 && count(policy.allowEmails.length, 'access.count.emails'),
    policy.allowEmailDomains.length > 0 && count(policy.allowEmailDomains.length, 'access.count.emailDomains'),
    policy.allowGroups.length > 0 && count(policy.allowGroups.length, 'access.count.groups'),
  ].filter((part): part is string => typeof part === 'string');
  return parts.length > 0 ? parts.join(', ') : t('access.nobody');
}

/** One line per way in and per exception; a public policy is one line. */
export function describePolicy(policy: AccessPolicy): string[] {
  if (policy.mode === 'public') return [t('access.policy.public')];
  const lines: string[] = [];
  if (policy.providerId !== null)
    lines.push(
      t('access.policy.sso', {
        provider: policy.providerName ?? t('access.policy.aProvider'),
        who: describeAllowList(policy),
      }),
    );
  if (policy.passwordSet) lines.push(t('access.password.label'));
  if (policy.shareLinks) lines.push(t('access.shareLinks'));
  if (policy.bypassPaths.length > 0)
    lines.push(t('access.policy.noCheckBelow', { paths: policy.bypassPaths.join(', ') }));
  if (policy.bypassNetworks.length > 0)
    lines.push(t('access.policy.noCheckFrom', { networks: policy.bypassNetworks.join(', ') }));
  lines.push(t('access.policy.sessions', { duration: formatDuration(policy.sessionSeconds) }));
  return lines;
}

/** Where a service's effective policy comes from, in words. */
export function describeSource(access: ServiceAccess): string {
  if (access.effective.source === 'none')
    return t(access.domain === null ? 'access.source.noDomain' : 'access.source.none');
  if (access.effective.source === 'service') return t('access.source.own');
  const domain = access.domain ?? t('access.itsDomain');
  // A node's token set a policy weaker than the domain's (which the operator made stricter later): it no longer counts.
  if (access.own !== null) return t('access.source.overridden', { domain });
  return t('access.source.inherited', { domain });
}
