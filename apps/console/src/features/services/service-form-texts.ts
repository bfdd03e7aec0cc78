import type { HttpService, Node, TcpService } from '@postern/contract';
import { t } from '../../i18n/i18n';
import { canEditBackendHost } from './service-form-rules';

// What the HTTP and TCP service forms share: their props and help texts (read when rendering: the operator's
// language may change).

export type ServiceFormProps<S extends HttpService | TcpService> = {
  node: Node;
  service?: S;
  onClose: () => void;
  /** After a create: the new service, for the service-exposed dialog. */
  onCreated: (service: S) => void;
};

/** After an edit; names the new public address when the edit moved it (domain, path or port changed). */
export const updatedMessage = (before: string, after: string): string =>
  before === after ? t('services.updated') : t('services.updatedMoved', { address: after });

export const describeBackendHostField = (node: Node): string =>
  canEditBackendHost(node) ? t('services.form.backendHostHint') : t('services.form.backendHostLocked');
