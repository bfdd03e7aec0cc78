import type { Node } from '@postern/contract';
import type { ConfirmOptions } from '../../components/ui/confirm';
import { t } from '../../i18n/i18n';

// Confirmation texts before connect, disconnect and delete (the spec's "Error catalogue"), read when the dialog opens.

export function connectConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: t('nodes.confirm.connectTitle'),
    description: t('nodes.confirm.connectText', { name: node.name }),
    variant: 'success',
    cancelButtonText: t('ui.cancel'),
    acceptButtonText: t('nodes.confirm.connectAccept'),
  };
}

export function disconnectConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: t('nodes.confirm.disconnectTitle'),
    description: t('nodes.confirm.disconnectText', { name: node.name }),
    variant: 'danger',
    cancelButtonText: t('ui.cancel'),
    acceptButtonText: t('nodes.confirm.disconnectAccept'),
  };
}

export function deleteConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: t('nodes.confirm.deleteTitle'),
    description: t('nodes.confirm.deleteText', { name: node.name }),
    variant: 'danger',
    cancelButtonText: t('ui.cancel'),
    acceptButtonText: t('nodes.confirm.deleteAccept'),
  };
}
