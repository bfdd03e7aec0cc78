import { AgentGatewayNetworksSchema, type Node } from '@postern/contract';
import type { Command } from '../args.js';
import { openApi, type CliContext } from '../context.js';
import { checkBody } from './services.js';

// networks: show or replace the subnets a gateway node routes (the agent API checks them like the console does).

export async function runNetworks(
  context: CliContext,
  command: Extract<Command, { kind: 'networks' }>,
): Promise<number> {
  const body = command.set === null ? null : checkBody(AgentGatewayNetworksSchema, { gatewayNetworks: command.set });
  const api = await openApi(context, command.connection);
  const node = body === null ? await api.getNode() : await api.setGatewayNetworks(body.gatewayNetworks);
  context.stdout.write(formatNetworks(node, body !== null));
  return 0;
}

export function formatNetworks(
  node: Pick<Node, 'isGateway' | 'gatewayNetworks' | 'gatewayNetwork'>,
  isSet: boolean,
): string {
  // A gateway from before gatewayNetworks answers only the single field.
  const networks =
    node.gatewayNetworks.length > 0 ? node.gatewayNetworks : node.gatewayNetwork ? [node.gatewayNetwork] : [];
  if (!node.isGateway)
    return "This node is not a gateway: the gateway's operator makes a node a gateway in the console.\n";
  return `${isSet ? 'This node now routes:\n' : ''}${networks.map((network) => `${network}\n`).join('')}`;
}
