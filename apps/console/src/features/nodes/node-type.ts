import type { Node } from '@postern/contract';
import { t } from '../../i18n/i18n';

export function nodeTypeLabel(node: Pick<Node, 'isGateway' | 'isLocal'>): string {
  if (node.isLocal) return t('nodes.type.local');
  return t(node.isGateway ? 'nodes.type.gateway' : 'nodes.type.node');
}

/** Each type its own colour as well as its own word, so neither alone carries the difference. */
export function nodeTypeTone(node: Pick<Node, 'isGateway' | 'isLocal'>): 'purple' | 'blue' | 'gray' {
  if (node.isLocal) return 'purple';
  return node.isGateway ? 'blue' : 'gray';
}
