import type { HttpService, Node, ServiceType, TcpService } from '@postern/contract';
import { useState, type ReactNode } from 'react';
import { Button } from '../../components/ui/button';
import { Card } from '../../components/ui/card';
import { EmptyState } from '../../components/ui/empty-state';
import { PlusIcon } from '../../components/ui/icons';
import type { AnyService } from '../../queries/services';
import { HttpServiceFormDialog, TcpServiceFormDialog } from './service-form-dialogs';
import { serviceCardId } from './service-info-from-url';
import { ServiceList, useUrlServiceView } from './service-list';
import { useCan } from '../../queries/account';
import { t } from '../../i18n/i18n';

// The node page's HTTP and TCP service cards (the spec's "Screens and routes"): paged by 5, editable, with the add
// form.

/** null: closed; 'new': the create form; a service: its edit form. */
type FormState<S> = null | 'new' | S;

function ServicesCard({
  node,
  type,
  form,
  onAdd,
  onEdit,
}: {
  node: Node;
  type: ServiceType;
  form: ReactNode;
  onAdd: () => void;
  onEdit: (service: AnyService) => void;
}) {
  const label = type === 'http' ? 'HTTP' : 'TCP';
  const [view, onViewChange] = useUrlServiceView(type);
  const mayOperate = useCan('operate');
  return (
    <div id={serviceCardId(type)} className="scroll-mt-20">
      <Card
        title={t('services.card.title', { type: label })}
        actions={
          mayOperate && (
            <Button variant="secondary" onClick={onAdd}>
              <PlusIcon className="size-4" /> {t('services.add')}
            </Button>
          )
        }
      >
        <ServiceList
          type={type}
          scope={{ kind: 'node', nodeId: node.id }}
          onEdit={onEdit}
          view={view}
          onViewChange={onViewChange}
          facts={{ node: { status: node.status, enabled: node.enabled, isLocal: node.isLocal } }}
          empty={
            <EmptyState
              title={t('services.card.empty', { type: label })}
              description={t('services.card.emptyHint', { type: label })}
              actionLabel={t('services.add')}
              {...(mayOperate ? { onAction: onAdd } : {})}
            />
          }
        />
        {form}
      </Card>
    </div>
  );
}

const isHttpService = (service: AnyService): service is HttpService => 'pathLocation' in service;

export function HttpServicesCard({ node }: { node: Node }) {
  const [formState, setFormState] = useState<FormState<HttpService>>(null);
  return (
    <ServicesCard
      node={node}
      type="http"
      onAdd={() => setFormState('new')}
      onEdit={(service) => isHttpService(service) && setFormState(service)}
      form={
        <HttpServiceFormDialog
          node={node}
          {...(formState !== null && formState !== 'new' ? { service: formState } : {})}
          open={formState !== null}
          onClose={() => setFormState(null)}
        />
      }
    />
  );
}

export function TcpServicesCard({ node }: { node: Node }) {
  const [formState, setFormState] = useState<FormState<TcpService>>(null);
  return (
    <ServicesCard
      node={node}
      type="tcp"
      onAdd={() => setFormState('new')}
      onEdit={(service) => !isHttpService(service) && setFormState(service)}
      form={
        <TcpServiceFormDialog
          node={node}
          {...(formState !== null && formState !== 'new' ? { service: formState } : {})}
          open={formState !== null}
          onClose={() => setFormState(null)}
        />
      }
    />
  );
}
