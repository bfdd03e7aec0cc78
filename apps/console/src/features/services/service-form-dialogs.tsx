import type { HttpService, Node, TcpService } from '@postern/contract';
import { useState, type ReactNode } from 'react';
import { HttpServiceForm } from './http-service-form';
import { ServiceInfoDialog } from './service-info-dialog';
import { TcpServiceForm } from './tcp-service-form';

// The service form dialogs the node pages open. After a create the form gives way to 'Your Service is Now
// Publicly Available' with the new public address (the spec's "States and transitions").

type DialogProps<S> = { node: Node; service?: S; open: boolean; onClose: () => void };

/**
 * Shows the form, and after a create the service-exposed dialog in its place; `onClose` runs when the operator
 * leaves either. Works whether the parent toggles `open` or mounts the dialog only while it is open.
 */
function ServiceFormFlow({
  open,
  onClose,
  renderForm,
}: {
  open: boolean;
  onClose: () => void;
  renderForm: (onCreated: (service: HttpService | TcpService) => void) => ReactNode;
}) {
  const [exposed, setExposed] = useState<HttpService | TcpService | null>(null);
  if (!open) return null;
  if (exposed) {
    const close = () => {
      setExposed(null);
      onClose();
    };
    return <ServiceInfoDialog service={exposed} isJustExposed onClose={close} />;
  }
  return renderForm(setExposed);
}

/** POST when creating, PATCH when `service` is given (the spec's "States and transitions"). */
export function HttpServiceFormDialog({ node, service, open, onClose }: DialogProps<HttpService>) {
  return (
    <ServiceFormFlow
      open={open}
      onClose={onClose}
      renderForm={(onCreated) => (
        <HttpServiceForm
          key={service?.id ?? 'new'}
          node={node}
          {...(service ? { service } : {})}
          onClose={onClose}
          onCreated={onCreated}
        />
      )}
    />
  );
}

/** POST when creating, PATCH when `service` is given (the spec's "States and transitions"). */
export function TcpServiceFormDialog({ node, service, open, onClose }: DialogProps<TcpService>) {
  return (
    <ServiceFormFlow
      open={open}
      onClose={onClose}
      renderForm={(onCreated) => (
        <TcpServiceForm
          key={service?.id ?? 'new'}
          node={node}
          {...(service ? { service } : {})}
          onClose={onClose}
          onCreated={onCreated}
        />
      )}
    />
  );
}
