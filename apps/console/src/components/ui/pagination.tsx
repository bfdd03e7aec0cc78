import { useEffect, useRef } from 'react';
import { Button } from './button';
import { Spinner } from './spinner';
import { formatNumber } from '../../i18n/format';
import { t } from '../../i18n/i18n';

/** 'Showing x to y of z results' for a 1-based page (the spec's "Business constants and limits"). */
export function describePage(page: number, limit: number, total: number): string {
  const from = total === 0 ? 0 : (page - 1) * limit + 1;
  const to = Math.min(page * limit, total);
  return t('ui.showing', { from: formatNumber(from), to: formatNumber(to), total: formatNumber(total) });
}

export function pageCount(limit: number, total: number): number {
  return Math.max(1, Math.ceil(total / limit));
}

/**
 * Previous/Next and the range text; renders nothing when everything fits on one page. While another page loads (the
 * list keeps showing the old rows meanwhile), the range text gives way to a progress note.
 */
export function Pagination({
  page,
  limit,
  total,
  onPageChange,
  isLoading = false,
}: {
  page: number;
  limit: number;
  total: number;
  onPageChange: (page: number) => void;
  isLoading?: boolean;
}) {
  const pages = pageCount(limit, total);
  const previous = useRef<HTMLButtonElement>(null);
  const next = useRef<HTMLButtonElement>(null);
  // A button that disables itself under the keyboard would drop focus to the page body: hand it to the other one.
  useEffect(() => {
    const clicked = [previous.current, next.current].find((button) => button?.dataset.clicked === 'true');
    if (!clicked?.disabled) return;
    // Chrome keeps a just-disabled button as activeElement until its next focus fix-up, then drops to the body.
    const active = document.activeElement;
    if (active === clicked || active === document.body || active === null)
      (clicked === previous.current ? next.current : previous.current)?.focus();
  }, [page]);
  const press = (button: HTMLButtonElement | null, target: number) => {
    for (const b of [previous.current, next.current]) if (b) b.dataset.clicked = String(b === button);
    onPageChange(target);
  };
  if (pages <= 1) return null;
  return (
    <nav
      aria-label={t('ui.pagination')}
      className="flex items-center justify-between gap-2 border-t border-gray-200 px-4 py-3 dark:border-gray-800"
    >
      {isLoading ? (
        <p className="flex items-center gap-2 text-sm text-gray-600 dark:text-gray-400">
          <Spinner label={t('ui.loadingPage')} /> {t('ui.loadingEllipsis')}
        </p>
      ) : (
        <p className="text-sm text-gray-600 dark:text-gray-400">{describePage(page, limit, total)}</p>
      )}
      <div className="flex gap-2">
        <Button
          ref={previous}
          variant="secondary"
          disabled={page <= 1}
          onClick={() => press(previous.current, page - 1)}
        >
          {t('ui.previous')}
        </Button>
        <Button ref={next} variant="secondary" disabled={page >= pages} onClick={() => press(next.current, page + 1)}>
          {t('ui.next')}
        </Button>
      </div>
    </nav>
  );
}

/** Steps back when the shown page no longer exists (its last row was deleted). */
export function useClampPage(
  page: number,
  limit: number,
  total: number | undefined,
  setPage: (page: number) => void,
): void {
  useEffect(() => {
    if (total !== undefined && page > pageCount(limit, total)) setPage(pageCount(limit, total));
  }, [page, limit, total, setPage]);
}
