import { lazy, Suspense, useEffect, useState } from 'react';
import { SearchIcon } from '../components/ui/icons';
import { t, withMoreTexts } from '../i18n/i18n';

// The dialog and its queries load on first use: the shell's first page stays within its JS budget. Its texts are in
// the catalogues' `more` part, fetched with it (the home page may not have needed them yet).
const loadDialog = () => withMoreTexts(import('../features/find/find-dialog'));

const FindDialog = lazy(async () => ({ default: (await loadDialog()).FindDialog }));

/** Ctrl+K (⌘K on a Mac) or this button: find a service, node or domain by name or address from anywhere. */
export function FindTrigger() {
  const [isOpen, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setOpen(true);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return (
    <>
      <button
        type="button"
        onClick={() => setOpen(true)}
        onPointerEnter={() => void loadDialog()}
        onFocus={() => void loadDialog()}
        aria-keyshortcuts="Control+K Meta+K"
        className="flex items-center gap-2 rounded-md border border-gray-300 px-2 py-1.5 text-sm text-gray-600 hover:bg-gray-100 dark:border-gray-600 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <SearchIcon className="size-4" />
        <span className="sr-only sm:not-sr-only">{t('shell.find')}</span>
        <kbd
          aria-hidden="true"
          className="hidden rounded border border-gray-300 px-1 text-xs sm:inline dark:border-gray-600"
        >
          Ctrl K
        </kbd>
      </button>
      {isOpen && (
        <Suspense fallback={null}>
          <FindDialog onClose={() => setOpen(false)} />
        </Suspense>
      )}
    </>
  );
}
