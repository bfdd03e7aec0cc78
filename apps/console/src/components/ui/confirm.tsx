import type { ReactNode } from 'react';
import { createContext, useCallback, useContext, useRef, useState } from 'react';
import type { ConfirmDialog } from './confirm-dialog';

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

/**
 * The dialog's code is fetched when first asked (then it stays mounted): the first page carries neither it nor the
 * Modal. A failed fetch (the gateway unreachable) answers that question "cancelled"; the next one fetches again.
 */
let loadedDialog: typeof ConfirmDialog | null = null;

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [options, setOptions] = useState<ConfirmOptions | null>(null);
  const [Dialog, setDialog] = useState<typeof ConfirmDialog | null>(() => loadedDialog);
  const resolveRef = useRef<((accepted: boolean) => void) | null>(null);

  const settle = useCallback((accepted: boolean) => {
    resolveRef.current?.(accepted);
    resolveRef.current = null;
    setOptions(null);
  }, []);

  const confirm = useCallback<Confirm>(
    (next) =>
      new Promise<boolean>((resolve) => {
        resolveRef.current?.(false); // a second confirm replaces a pending one, which counts as cancelled
        resolveRef.current = resolve;
        setOptions(next);
        if (loadedDialog) {
          setDialog(() => loadedDialog);
          return;
        }
        import('./confirm-dialog').then(
          (module) => {
            loadedDialog = module.ConfirmDialog;
            setDialog(() => module.ConfirmDialog);
          },
          () => {
            if (resolveRef.current === resolve) settle(false);
          },
        );
      }),
    [settle],
  );

  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      {Dialog && <Dialog options={options} onSettle={settle} />}
    </ConfirmContext.Provider>
  );
}

/** `const confirm = useConfirm(); if (await confirm({...})) ...` */
export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error('useConfirm needs a ConfirmProvider');
  return confirm;
}
