import type { Domain, SslMode } from '@postern/contract';

// Domain form state (console-spec §5): skipping validation forces self-signed and locks the selector, because
// Let's Encrypt cannot issue a certificate for a domain whose reachability was not checked.

export type DomainFormValues = { domain: string; ssl: SslMode; skipValidation: boolean };

export function getInitialDomainValues(domain?: Domain): DomainFormValues {
  return { domain: domain?.domain ?? '', ssl: domain?.ssl ?? 'certbot', skipValidation: false };
}

/** The patch to apply when the skip-validation box changes. */
export function applySkipValidation(skipValidation: boolean): Partial<DomainFormValues> {
  return skipValidation ? { skipValidation, ssl: 'self-signed' } : { skipValidation };
}

export function isSslSelectorDisabled(values: Pick<DomainFormValues, 'skipValidation'>): boolean {
  return values.skipValidation;
}
