import type { ConfirmOptions } from '../../components/ui/confirm';
import { t } from '../../i18n/i18n';

// The spec's "Error catalogue", revoke and delete of a personal access token. Functions, not constants: the texts are
// read when asked, in the language of that moment (the console's README, Languages).

export const revokeTokenConfirmation = (): ConfirmOptions => ({
  title: t('tokens.revokeTitle'),
  description: t('tokens.revokeText'),
  variant: 'danger',
  cancelButtonText: t('ui.cancel'),
  acceptButtonText: t('tokens.revokeAccept'),
});

export const deleteTokenConfirmation = (): ConfirmOptions => ({
  title: t('tokens.deleteTitle'),
  description: t('tokens.deleteText'),
  variant: 'danger',
  cancelButtonText: t('ui.cancel'),
  acceptButtonText: t('tokens.deleteAccept'),
});
