import type { Node } from '@postern/contract';
import { NodeCreateSchema } from '@postern/contract';
import { z } from 'zod';

// The node form's values and its one coupling rule, kept apart from the dialog so they can be tested alone.

export type NodeFormValues = {
  name: string;
  address: string;
  allowInternet: boolean;
  isGateway: boolean;
  gatewayNetwork: string;
  /** The gateway's further subnets as typed: separated by commas, spaces or new lines. */
  gatewayNetworks: string;
  /** The node's access tokens may replace its subnets (`postern networks set`); gateways only. */
  allowTokenNetworks: boolean;
};

export function nodeFormValues(node?: Node | null): NodeFormValues {
  return {
    name: node?.name ?? '',
    address: node?.address ?? '',
    allowInternet: node?.allowInternet ?? false,
    isGateway: node?.isGateway ?? false,
    gatewayNetwork: node?.gatewayNetwork ?? '',
    gatewayNetworks: (node?.gatewayNetworks ?? []).slice(1).join(', '),
    allowTokenNetworks: node?.allowTokenNetworks ?? false,
  };
}

/**
 * The spec's "Validation rules": unchecking the gateway option clears gatewayNetwork (and the further networks with it,
 * and the tokens' right to set them).
 */
export function withGateway(values: NodeFormValues, isGateway: boolean): NodeFormValues {
  return {
    ...values,
    isGateway,
    gatewayNetwork: isGateway ? values.gatewayNetwork : '',
    gatewayNetworks: isGateway ? values.gatewayNetworks : '',
    allowTokenNetworks: isGateway && values.allowTokenNetworks,
  };
}

const splitNetworks = (text: string): string[] => text.split(/[\s,]+/).filter((part) => part !== '');

/**
 * The form's values as the API takes them: the further networks follow the first in `gatewayNetworks`. Without a
 * first network the list is left out, so the spec's "required" lands on Gateway Network.
 */
function toNodeBody(values: unknown): unknown {
  if (typeof values !== 'object' || values === null) return values;
  const { gatewayNetworks, ...rest } = values as Partial<NodeFormValues>;
  const first = rest.gatewayNetwork?.trim() ?? '';
  if (!rest.isGateway || first === '') return rest;
  return { ...rest, gatewayNetworks: [first, ...splitNetworks(gatewayNetworks ?? '')] };
}

export const NodeFormSchema = z.preprocess(toNodeBody, NodeCreateSchema);
