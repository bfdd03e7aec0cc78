import type { Node, ServiceSource } from '@postern/contract';
import type { SubmitEvent, ReactNode } from 'react';
import { Badge } from '../../components/ui/card';
import { FormDialog } from '../../components/ui/dialog';
import { AutocompleteField, IpListField, TextField } from '../../components/ui/form-field';
import type { FieldBinding } from '../../lib/use-zod-form';
import { DOMAIN_HELP, IP_HELP } from './service-form-texts';
import { nodeTypeLabel, nodeTypeTone } from '../nodes/node-type';
import { useDomainSuggestions } from './use-domain-suggestions';

type ServiceFormFrameProps = {
  title: string;
  /** The node the service lives on, named at the top so the operator knows where it is published from. */
  node: Node;
  /** A service the node's agent published from a container's Docker labels (docs/LABELS.md): said at the top. */
  source?: ServiceSource | null | undefined;
  domainLabel: string;
  domainPlaceholder: string;
  /** The fields every service has; the kind's own fields go between them as children. */
  fields: {
    name: FieldBinding<string>;
    domain: FieldBinding<string>;
    allowedIps: FieldBinding<string[]>;
    blockedIps: FieldBinding<string[]>;
  };
  onClose: () => void;
  onSubmit: (event: SubmitEvent) => void;
  isSubmitting: boolean;
  children: ReactNode;
};

/** What the HTTP and TCP/UDP service forms share: the dialog, name and domain first, the access lists last. */
export function ServiceFormFrame({
  title,
  node,
  source,
  domainLabel,
  domainPlaceholder,
  fields,
  onClose,
  onSubmit,
  isSubmitting,
  children,
}: ServiceFormFrameProps) {
  const loadDomains = useDomainSuggestions();
  return (
    <FormDialog open size="large" title={title} onClose={onClose} onSubmit={onSubmit} isSubmitting={isSubmitting}>
      <p
        className="mb-4 flex flex-wrap items-center gap-2 rounded-md bg-gray-50 px-3 py-2 text-sm dark:bg-gray-800"
        aria-label="Node"
      >
        <span className="text-gray-600 dark:text-gray-300">Node</span>
        <strong>{node.name}</strong>
        <Badge tone={nodeTypeTone(node)}>{nodeTypeLabel(node)}</Badge>
        {node.address && <span className="font-mono text-gray-600 dark:text-gray-300">{node.address}</span>}
      </p>
      {source && (
        <p
          className="mb-4 rounded-md bg-blue-50 px-3 py-2 text-sm text-blue-900 dark:bg-blue-950 dark:text-blue-100"
          aria-label="Source"
        >
          Published by the Docker labels of container <strong className="font-mono">{source.container}</strong> on this
          node (<span className="font-mono">postern.{source.key}.*</span>). Your changes here stand until the
          container&apos;s labels change; to change it for good, change its labels.
        </p>
      )}
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <TextField
          label="Service Name"
          placeholder="Enter a friendly name for this service"
          required
          {...fields.name}
        />
        <AutocompleteField
          label={domainLabel}
          placeholder={domainPlaceholder}
          description={DOMAIN_HELP}
          loadOptions={loadDomains}
          {...fields.domain}
        />
        {children}
        <IpListField label="Allowed IPs" description={IP_HELP.allowed} {...fields.allowedIps} />
        <IpListField label="Blocked IPs" description={IP_HELP.blocked} {...fields.blockedIps} />
      </div>
    </FormDialog>
  );
}
