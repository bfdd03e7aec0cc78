import type { Domain, Node, SslMode } from '@postern/contract';
import { t } from '../../i18n/i18n';

type AcmeChallenge = NonNullable<Domain['challenge']>;

// Domain form state (the spec's "Validation rules"): skipping validation forces self-signed and locks the selector,
// because Let's Encrypt cannot issue a certificate for a domain whose reachability was not checked.

/**
 * `ownerNodeId` as the owner select holds it: '' for the admin, else the node id as text; `dnsProviderId` and
 * `acmeCaId` the same way ('': none, the gateway's default CA).
 */
export type DomainFormValues = {
  domain: string;
  ssl: SslMode;
  skipValidation: boolean;
  ownerNodeId: string;
  challenge: AcmeChallenge;
  dnsProviderId: string;
  acmeCaId: string;
};

export function getInitialDomainValues(domain?: Domain): DomainFormValues {
  return {
    domain: domain?.domain ?? '',
    ssl: domain?.ssl ?? 'certbot',
    skipValidation: false,
    ownerNodeId: domain?.ownerNodeId == null ? '' : String(domain.ownerNodeId),
    challenge: domain?.challenge ?? 'http-01',
    dnsProviderId: domain?.dnsProviderId == null ? '' : String(domain.dnsProviderId),
    acmeCaId: domain?.acmeCaId == null ? '' : String(domain.acmeCaId),
  };
}

/**
 * The owner select's choices: Admin, then every node that may own a domain (not the local one). The current owner
 * stays listed even when it is not among the nodes loaded (the list is one page of the API's maximum size).
 */
export function ownerOptions(
  nodes: readonly Pick<Node, 'id' | 'name' | 'isLocal'>[],
  current?: Pick<Domain, 'ownerNodeId' | 'ownerNodeName'>,
): { value: string; label: string }[] {
  const options = nodes.filter((node) => !node.isLocal).map((node) => ({ value: String(node.id), label: node.name }));
  const currentId = current?.ownerNodeId;
  if (currentId != null && !options.some((option) => option.value === String(currentId))) {
    options.push({
      value: String(currentId),
      label: current?.ownerNodeName ?? t('domains.owner.node', { id: currentId }),
    });
  }
  return [{ value: '', label: t('domains.owner.admin') }, ...options];
}

/** The patch to apply when the skip-validation box changes. */
export function applySkipValidation(skipValidation: boolean): Partial<DomainFormValues> {
  return skipValidation ? { skipValidation, ssl: 'self-signed' } : { skipValidation };
}

export function isSslSelectorDisabled(values: Pick<DomainFormValues, 'skipValidation'>): boolean {
  return values.skipValidation;
}
