import type { Node } from '@postern/contract';

// The node form's values and its one coupling rule, kept apart from the dialog so they can be tested alone.

export type NodeFormValues = {
  name: string;
  address: string;
  allowInternet: boolean;
  isGateway: boolean;
  gatewayNetwork: string;
};

export function nodeFormValues(node?: Node | null): NodeFormValues {
  return {
    name: node?.name ?? '',
    address: node?.address ?? '',
    allowInternet: node?.allowInternet ?? false,
    isGateway: node?.isGateway ?? false,
    gatewayNetwork: node?.gatewayNetwork ?? '',
  };
}

/** console-spec §5: unchecking the gateway option clears gatewayNetwork. */
export function withGateway(values: NodeFormValues, isGateway: boolean): NodeFormValues {
  return { ...values, isGateway, gatewayNetwork: isGateway ? values.gatewayNetwork : '' };
}
