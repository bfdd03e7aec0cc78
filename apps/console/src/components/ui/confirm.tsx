import type { ReactNode } from 'react';
import { createContext, useCallback, useContext, useRef, useState } from 'react';
import type { ButtonVariant } from './button';
import { Button } from './button';
import { Modal } from './dialog';
import { CheckIcon, InfoIcon, WarningIcon } from './icons';

// The spec's "Entities and their fields" "Confirm options": title, description, icon, variant, cancelButtonText,
// acceptButtonText.

export type ConfirmVariant = 'danger' | 'success' | 'info';

export type ConfirmOptions = {
  title: string;
  description: ReactNode;
  icon?: ReactNode;
  variant?: ConfirmVariant;
  cancelButtonText?: string;
  acceptButtonText?: string;
};

type Confirm = (options: ConfirmOptions) => Promise<boolean>;

const ConfirmContext = createContext<Confirm | null>(null);

const variantStyles: Record<ConfirmVariant, { button: ButtonVariant; icon: ReactNode }> = {
  danger: { button: 'danger', icon: <WarningIcon className="size-6 text-red-600" /> },
  success: { button: 'success', icon: <CheckIcon className="size-6 text-green-600" /> },
  info: { button: 'primary', icon: <InfoIcon className="size-6 text-blue-600" /> },
};

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [options, setOptions] = useState<ConfirmOptions | null>(null);
  const resolveRef = useRef<((accepted: boolean) => void) | null>(null);

  const confirm = useCallback<Confirm>(
    (next) =>
      new Promise<boolean>((resolve) => {
        resolveRef.current?.(false); // a second confirm replaces a pending one, which counts as cancelled
        resolveRef.current = resolve;
        setOptions(next);
      }),
    [],
  );

  const settle = (accepted: boolean) => {
    resolveRef.current?.(accepted);
    resolveRef.current = null;
    setOptions(null);
  };

  const variant = options?.variant ?? 'info';
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      <Modal
        open={options !== null}
        title={options?.title}
        size="small"
        icon={options?.icon ?? variantStyles[variant].icon}
        onClose={() => settle(false)}
      >
        <div className="px-5 py-4 text-sm text-gray-600 dark:text-gray-300">{options?.description}</div>
        <div className="flex justify-end gap-2 border-t border-gray-200 px-5 py-3 dark:border-gray-800">
          <Button variant="secondary" onClick={() => settle(false)}>
            {options?.cancelButtonText ?? 'Cancel'}
          </Button>
          <Button variant={variantStyles[variant].button} onClick={() => settle(true)}>
            {options?.acceptButtonText ?? 'Confirm'}
          </Button>
        </div>
      </Modal>
    </ConfirmContext.Provider>
  );
}

/** `const confirm = useConfirm(); if (await confirm({...})) ...` */
export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error('useConfirm needs a ConfirmProvider');
  return confirm;
}
