import type { ReactNode } from 'react';
import type { ButtonVariant } from './button';
import { Button } from './button';
import type { ConfirmOptions, ConfirmVariant } from './confirm';
import { Modal } from './dialog';
import { CheckIcon, InfoIcon, WarningIcon } from './icons';
import { t } from '../../i18n/i18n';

// The confirm dialog itself: a chunk of its own that ConfirmProvider (confirm.tsx) loads when first asked, so the
// first page carries neither it nor the Modal.

const variantStyles: Record<ConfirmVariant, { button: ButtonVariant; icon: ReactNode }> = {
  danger: { button: 'danger', icon: <WarningIcon className="size-6 text-red-600" /> },
  success: { button: 'success', icon: <CheckIcon className="size-6 text-green-600" /> },
  info: { button: 'primary', icon: <InfoIcon className="size-6 text-blue-600" /> },
};

/** Open while `options` is set; `onSettle(true)` on accept, `onSettle(false)` on cancel, Escape or close. */
export function ConfirmDialog({
  options,
  onSettle,
}: {
  options: ConfirmOptions | null;
  onSettle: (accepted: boolean) => void;
}) {
  const variant = options?.variant ?? 'info';
  return (
    <Modal
      open={options !== null}
      title={options?.title}
      size="small"
      icon={options?.icon ?? variantStyles[variant].icon}
      onClose={() => onSettle(false)}
    >
      <div className="px-5 py-4 text-sm text-gray-600 dark:text-gray-300">{options?.description}</div>
      <div className="flex justify-end gap-2 border-t border-gray-200 px-5 py-3 dark:border-gray-800">
        <Button variant="secondary" onClick={() => onSettle(false)}>
          {options?.cancelButtonText ?? t('ui.cancel')}
        </Button>
        <Button variant={variantStyles[variant].button} onClick={() => onSettle(true)}>
          {options?.acceptButtonText ?? t('ui.confirm')}
        </Button>
      </div>
    </Modal>
  );
}
