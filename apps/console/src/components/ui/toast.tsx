import { useSyncExternalStore } from 'react';
import type { ToastType } from '../../lib/toast-store';
import { dismissToast, getToasts, pauseToast, resumeToast, showToast, subscribeToToasts } from '../../lib/toast-store';
import { CloseIcon } from './icons';

const typeClasses: Record<ToastType, string> = {
  success: 'border-green-500 bg-green-50 text-green-900 dark:bg-green-950 dark:text-green-100',
  error: 'border-red-500 bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-100',
  warning: 'border-yellow-500 bg-yellow-50 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100',
  info: 'border-blue-500 bg-blue-50 text-blue-900 dark:bg-blue-950 dark:text-blue-100',
};

/** `const { toast } = useToast(); toast({ message: 'Saved', type: 'success' })`; default duration 3000 ms. */
export function useToast() {
  return { toast: showToast };
}

/**
 * Renders the toasts at the top right (the spec's "Screens and routes"); mounted once in the app root, which gives
 * the translated `dismissLabel` (importing the translator here would split the first page's entry chunk).
 */
export function Toaster({ dismissLabel = 'Dismiss' }: { dismissLabel?: string }) {
  const toasts = useSyncExternalStore(subscribeToToasts, getToasts, getToasts);
  return (
    <div
      aria-live="polite"
      className="pointer-events-none fixed top-4 right-4 z-[60] flex w-80 max-w-[calc(100vw-2rem)] flex-col gap-2"
    >
      {toasts.map((toast) => (
        <div
          key={toast.id}
          role={toast.type === 'error' ? 'alert' : 'status'}
          data-type={toast.type}
          onPointerEnter={() => pauseToast(toast.id)}
          onPointerLeave={() => resumeToast(toast.id)}
          onFocus={() => pauseToast(toast.id)}
          onBlur={() => resumeToast(toast.id)}
          className={`toast-enter pointer-events-auto flex items-start gap-2 rounded-md border-l-4 px-3 py-2 text-sm shadow-lg ${typeClasses[toast.type]}`}
        >
          <p className="flex-1">{toast.message}</p>
          <button
            type="button"
            aria-label={dismissLabel}
            onClick={() => dismissToast(toast.id)}
            className="opacity-60 hover:opacity-100"
          >
            <CloseIcon className="size-4" />
          </button>
        </div>
      ))}
    </div>
  );
}
