import { useRouterState } from '@tanstack/react-router';
import { useSyncExternalStore } from 'react';
import { t } from '../i18n/i18n';
import { getConnection, subscribeToConnection } from '../lib/connection-store';

/**
 * Beyond the spec: says so while the gateway does not answer or a live stream is down, so a silent screen is not
 * taken for a quiet one. Gone by itself once a call or the stream gets through again.
 */
export function ConnectionBanner() {
  const { isApiUnreachable, isStreamRetrying } = useSyncExternalStore(
    subscribeToConnection,
    getConnection,
    getConnection,
  );
  const text = isApiUnreachable ? t('shell.apiUnreachable') : isStreamRetrying ? t('shell.streamRetrying') : null;
  return (
    <div role="status" aria-live="polite" className="empty:hidden">
      {text && (
        <p className="border-b border-yellow-500 bg-yellow-50 px-4 py-2 text-sm text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100">
          <span aria-hidden="true" className="mr-2 font-bold">
            !
          </span>
          {text}
        </p>
      )}
    </div>
  );
}

/** A thin bar while a page change waits for its data (the old page stays on screen meanwhile). */
export function NavigationProgress() {
  const isLoading = useRouterState({ select: (state) => state.status === 'pending' });
  if (!isLoading) return null;
  return (
    <div
      role="progressbar"
      aria-label={t('shell.loadingPage')}
      className="fixed inset-x-0 top-0 z-[70] h-1 overflow-hidden bg-brand-100 dark:bg-brand-950"
    >
      <div className="navigation-progress h-full w-1/3 bg-brand-600" />
    </div>
  );
}
