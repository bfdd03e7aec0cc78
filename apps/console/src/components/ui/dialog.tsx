import type { SubmitEvent, ReactNode } from 'react';
import { useEffect, useId, useLayoutEffect, useRef } from 'react';
import { createPortal } from 'react-dom';
import { Button } from './button';
import { CloseIcon } from './icons';
import { t } from '../../i18n/i18n';

export type DialogSize = 'small' | 'medium' | 'large';

const sizeClasses: Record<DialogSize, string> = { small: 'max-w-md', medium: 'max-w-2xl', large: 'max-w-4xl' };

type ModalProps = {
  open: boolean;
  title: ReactNode;
  onClose: () => void;
  size?: DialogSize;
  icon?: ReactNode;
  children: ReactNode;
};

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * Tab and Shift+Tab cycle through the topmost open dialog: it is aria-modal, so the page behind must not take
 * keyboard focus while it is open.
 */
function keepFocusInside(event: KeyboardEvent, panel: HTMLElement): void {
  const modals = document.querySelectorAll('[aria-modal="true"]');
  if (modals[modals.length - 1] !== panel) return;
  const focusable = [...panel.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  const active = document.activeElement;
  const isInside = active instanceof Node && panel.contains(active);
  if (!first || !last) {
    event.preventDefault();
    panel.focus();
  } else if (event.shiftKey && (active === first || !isInside)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (active === last || !isInside)) {
    event.preventDefault();
    first.focus();
  }
}

/**
 * The overlay and panel every dialog shares: Escape and the close button call onClose; focus moves and stays inside.
 */
export function Modal({ open, title, onClose, size = 'medium', icon, children }: ModalProps) {
  const titleId = useId();
  const panelRef = useRef<HTMLDivElement>(null);
  // The latest onClose for the key handler, which lives as long as the dialog is open.
  const onCloseRef = useRef(onClose);
  useLayoutEffect(() => {
    onCloseRef.current = onClose;
  });

  useEffect(() => {
    if (!open) return;
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const first = panelRef.current?.querySelector<HTMLElement>(
      'input:not([disabled]):not([readonly]), select, textarea, button[type="submit"]',
    );
    (first ?? panelRef.current)?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        onCloseRef.current();
      } else if (event.key === 'Tab' && panelRef.current) {
        keepFocusInside(event, panelRef.current);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      previous?.focus();
    };
  }, [open]);

  if (!open) return null;
  return createPortal(
    <div className="fixed inset-0 z-50 flex items-start justify-center overflow-y-auto bg-gray-900/60 p-4 sm:items-center">
      <div
        ref={panelRef}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        className={`w-full ${sizeClasses[size]} rounded-lg bg-white shadow-xl outline-none dark:bg-gray-900`}
      >
        <div className="flex items-start justify-between gap-4 border-b border-gray-200 px-5 py-4 dark:border-gray-800">
          <div className="flex items-center gap-3">
            {icon}
            <h2 id={titleId} className="text-lg font-semibold">
              {title}
            </h2>
          </div>
          <button
            type="button"
            onClick={onClose}
            aria-label={t('ui.close')}
            className="rounded p-1 text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
          >
            <CloseIcon className="size-5" />
          </button>
        </div>
        {children}
      </div>
    </div>,
    document.body,
  );
}

type FormDialogProps = {
  open: boolean;
  title: ReactNode;
  size?: DialogSize;
  onClose: () => void;
  onSubmit: (event: SubmitEvent) => void;
  isSubmitting?: boolean;
  saveText?: string;
  children: ReactNode;
};

/** A form in a dialog with Cancel and Save (the spec's "Screens and routes"). */
export function FormDialog({
  open,
  title,
  size = 'medium',
  onClose,
  onSubmit,
  isSubmitting = false,
  saveText = t('ui.save'),
  children,
}: FormDialogProps) {
  return (
    <Modal open={open} title={title} size={size} onClose={onClose}>
      <form onSubmit={onSubmit} noValidate>
        <div className="flex flex-col gap-4 px-5 py-4">{children}</div>
        <div className="flex justify-end gap-2 border-t border-gray-200 px-5 py-3 dark:border-gray-800">
          <Button variant="secondary" onClick={onClose}>
            {t('ui.cancel')}
          </Button>
          <Button type="submit" isLoading={isSubmitting}>
            {saveText}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

/** A message with a single 'Got it!' button (the spec's "Screens and routes"). */
export function InfoDialog({
  open,
  title,
  icon,
  size = 'medium',
  onClose,
  children,
}: {
  open: boolean;
  title: ReactNode;
  icon?: ReactNode;
  size?: DialogSize;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Modal open={open} title={title} icon={icon} size={size} onClose={onClose}>
      <div className="flex flex-col gap-4 px-5 py-4 text-sm">{children}</div>
      <div className="flex justify-end border-t border-gray-200 px-5 py-3 dark:border-gray-800">
        <Button onClick={onClose}>{t('ui.gotIt')}</Button>
      </div>
    </Modal>
  );
}
