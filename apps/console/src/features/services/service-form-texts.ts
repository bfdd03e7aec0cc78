import type { HttpService, Node, TcpService } from '@postern/contract';
import { canEditBackendHost } from './service-form-rules';

// What the HTTP and TCP service forms share: their props and help texts.

export type ServiceFormProps<S extends HttpService | TcpService> = {
  node: Node;
  service?: S;
  onClose: () => void;
  /** After a create: the new service, for the service-exposed dialog. */
  onCreated: (service: S) => void;
};

export const EXPOSED_MESSAGE = 'Service exposed successfully!';

export const UPDATED_MESSAGE = 'Service updated successfully!';

/** After an edit; names the new public address when the edit moved it (domain, path or port changed). */
export const updatedMessage = (before: string, after: string): string =>
  before === after ? UPDATED_MESSAGE : `${UPDATED_MESSAGE} It is now published at ${after}`;

export const DOMAIN_HELP = "Pick a domain or type one. Empty: the service is reached by the gateway's address.";

export const IP_HELP = {
  allowed: 'IPs or subnets allowed to reach the service, one per line (e.g. 192.168.1.0/24). Empty: everyone.',
  blocked: 'IPs or subnets denied access, one per line.',
};

export const describeBackendHostField = (node: Node): string =>
  canEditBackendHost(node)
    ? 'Host name or IP of the backend service, as seen from this node.'
    : 'Services are reached on the node itself; only gateways and the local node can forward to another host.';
