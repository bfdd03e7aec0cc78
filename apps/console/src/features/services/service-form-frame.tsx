import type { FormEvent, ReactNode } from 'react';
import { FormDialog } from '../../components/ui/dialog';
import { AutocompleteField, IpListField, TextField } from '../../components/ui/form-field';
import type { FieldBinding } from '../../lib/use-zod-form';
import { DOMAIN_HELP, IP_HELP } from './service-form-texts';
import { useDomainSuggestions } from './use-domain-suggestions';

type ServiceFormFrameProps = {
  title: string;
  domainLabel: string;
  domainPlaceholder: string;
  /** The fields every service has; the kind's own fields go between them as children. */
  fields: {
    name: FieldBinding<string>;
    domain: FieldBinding<string>;
    allowedIps: FieldBinding<string[]>;
    blockedIps: FieldBinding<string[]>;
  };
  onClose(): void;
  onSubmit(event: FormEvent): void;
  isSubmitting: boolean;
  children: ReactNode;
};

/** What the HTTP and TCP/UDP service forms share: the dialog, name and domain first, the access lists last. */
export function ServiceFormFrame({ title, domainLabel, domainPlaceholder, fields, onClose, onSubmit, isSubmitting, children }: ServiceFormFrameProps) {
  const loadDomains = useDomainSuggestions();
  return (
    <FormDialog open size="large" title={title} onClose={onClose} onSubmit={onSubmit} isSubmitting={isSubmitting}>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <TextField label="Service Name" placeholder="Enter a friendly name for this service" {...fields.name} />
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
