import type { Node, ServiceSource } from '@postern/contract';
import type { SubmitEvent, ReactNode } from 'react';
import { Badge } from '../../components/ui/card';
import { FormDialog } from '../../components/ui/dialog';
import { AutocompleteField, IpListField, TextField } from '../../components/ui/form-field';
import type { FieldBinding } from '../../lib/use-zod-form';
import { t, withSlot } from '../../i18n/i18n';
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
  // The container and its labels' prefix are set apart (bold, monospace) in the language's own sentence.
  const [beforeContainer, afterContainer] = withSlot('services.form.labelsNote', 'container', { labels: '\u0001' });
  const [betweenParts = '', afterLabels = ''] = afterContainer.split('\u0001');
  const labelsNote = [beforeContainer, betweenParts, afterLabels];
  return (
    <FormDialog open size="large" title={title} onClose={onClose} onSubmit={onSubmit} isSubmitting={isSubmitting}>
      <p
        className="mb-4 flex flex-wrap items-center gap-2 rounded-md bg-gray-50 px-3 py-2 text-sm dark:bg-gray-800"
        aria-label={t('services.column.node')}
      >
        <span className="text-gray-600 dark:text-gray-300">{t('services.column.node')}</span>
        <strong>{node.name}</strong>
        <Badge tone={nodeTypeTone(node)}>{nodeTypeLabel(node)}</Badge>
        {node.address && <span className="font-mono text-gray-600 dark:text-gray-300">{node.address}</span>}
      </p>
      {source && (
        <p
          className="mb-4 rounded-md bg-blue-50 px-3 py-2 text-sm text-blue-900 dark:bg-blue-950 dark:text-blue-100"
          aria-label={t('services.form.source')}
        >
          {labelsNote[0]}
          <strong className="font-mono">{source.container}</strong>
          {labelsNote[1]}
          <span className="font-mono">postern.{source.key}.*</span>
          {labelsNote[2]}
        </p>
      )}
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <TextField
          label={t('services.form.name')}
          placeholder={t('services.form.namePlaceholder')}
          required
          {...fields.name}
        />
        <AutocompleteField
          label={domainLabel}
          placeholder={domainPlaceholder}
          description={t('services.form.domainHint')}
          loadOptions={loadDomains}
          {...fields.domain}
        />
        {children}
        <IpListField
          label={t('services.form.allowedIps')}
          description={t('services.form.allowedIpsHint')}
          {...fields.allowedIps}
        />
        <IpListField
          label={t('services.form.blockedIps')}
          description={t('services.form.blockedIpsHint')}
          {...fields.blockedIps}
        />
      </div>
    </FormDialog>
  );
}
