import type { AccessPolicy, ServiceAccess } from '@postern/contract';
import { formatDuration } from './access-form-rules';

// A policy in words, for the Access section's "inherits" line and the Visitor Access dialog.

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Who the single sign-on lets in: "2 emails, 1 email domain". */
function describeAllowList(policy: AccessPolicy): string {
  const parts = [
    policy.allowEmails.length > 0 && count(policy.allowEmails.length, 'email', 'emails'),
    policy.allowEmailDomains.length > 0 && count(policy.allowEmailDomains.length, 'email domain', 'email domains'),
    policy.allowGroups.length > 0 && count(policy.allowGroups.length, 'group', 'groups'),
  ].filter((part): part is string => typeof part === 'string');
  return parts.length > 0 ? parts.join(', ') : 'nobody listed';
}

/** One line per way in and per exception; a public policy is one line. */
export function describePolicy(policy: AccessPolicy): string[] {
  if (policy.mode === 'public') return ['Public: anyone can reach it'];
  const lines: string[] = [];
  if (policy.providerId !== null)
    lines.push(`Single sign-on with ${policy.providerName ?? 'a provider'} (${describeAllowList(policy)})`);
  if (policy.passwordSet) lines.push('Password or PIN');
  if (policy.shareLinks) lines.push('Share links');
  if (policy.bypassPaths.length > 0) lines.push(`No check below ${policy.bypassPaths.join(', ')}`);
  if (policy.bypassNetworks.length > 0) lines.push(`No check from ${policy.bypassNetworks.join(', ')}`);
  lines.push(`Sessions last ${formatDuration(policy.sessionSeconds)}`);
  return lines;
}

/** Where a service's effective policy comes from, in words. */
export function describeSource(access: ServiceAccess): string {
  if (access.effective.source === 'none')
    return access.domain === null ? 'No domain: services without one are always public' : 'No policy: public';
  if (access.effective.source === 'service') return 'Its own policy';
  // A node's token set a policy weaker than the domain's (which the operator made stricter later): it no longer counts.
  if (access.own !== null)
    return `The policy of ${access.domain ?? 'its domain'}: the service's own policy, set by its node's token, lets in more and does not count`;
  return `Inherited from ${access.domain ?? 'its domain'}`;
}
