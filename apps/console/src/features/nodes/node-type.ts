import type { Node } from '@postern/contract';

export function nodeTypeLabel(node: Pick<Node, 'isGateway' | 'isLocal'>): string {
  if (node.isLocal) return 'Local';
  return node.isGateway ? 'Gateway' : 'Node';
}

/** Each type its own colour as well as its own word, so neither alone carries the difference. */
export function nodeTypeTone(node: Pick<Node, 'isGateway' | 'isLocal'>): 'purple' | 'blue' | 'gray' {
  if (node.isLocal) return 'purple';
  return node.isGateway ? 'blue' : 'gray';
}
