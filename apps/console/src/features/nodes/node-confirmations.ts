import type { Node } from '@postern/contract';
import type { ConfirmOptions } from '../../components/ui/confirm';

// Confirmation texts before connect, disconnect and delete (the spec's "Error catalogue").

export function connectConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: 'Connect Node',
    description: `Are you sure you want to connect "${node.name}"? It can open its tunnel again and its services become reachable.`,
    variant: 'success',
    cancelButtonText: 'Cancel',
    acceptButtonText: 'Yes, connect!',
  };
}

export function disconnectConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: 'Disconnect Node',
    description: `Are you sure you want to disconnect "${node.name}"? Its tunnel stops passing traffic and its services become unreachable until you connect it again.`,
    variant: 'danger',
    cancelButtonText: 'Cancel',
    acceptButtonText: 'Yes, disconnect!',
  };
}

export function deleteConfirmation(node: Pick<Node, 'name'>): ConfirmOptions {
  return {
    title: 'Delete Node',
    description: `Are you sure you want to delete "${node.name}"? This action cannot be undone. Its services and access tokens are deleted with it.`,
    variant: 'danger',
    cancelButtonText: 'Cancel',
    acceptButtonText: 'Yes, delete it!',
  };
}
