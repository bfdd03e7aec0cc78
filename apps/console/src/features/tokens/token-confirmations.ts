import type { ConfirmOptions } from '../../components/ui/confirm';

// The spec's "Error catalogue", revoke and delete of a personal access token.

export const revokeTokenConfirmation: ConfirmOptions = {
  title: 'Revoke Personal Access Token',
  description:
    'Access with this token is disabled immediately, but an active tunnel is not necessarily ended. If you think the node is compromised, disable the node as well.',
  variant: 'danger',
  cancelButtonText: 'Cancel',
  acceptButtonText: 'Yes, revoke token!',
};

export const deleteTokenConfirmation: ConfirmOptions = {
  title: 'Delete Personal Access Token',
  description: 'This token will be deleted permanently. This action cannot be undone.',
  variant: 'danger',
  cancelButtonText: 'Cancel',
  acceptButtonText: 'Yes, delete it!',
};
