import type { RefObject } from 'react';
import { useEffect } from 'react';
import { t } from '../i18n/i18n';
import { links } from '../lib/links';

// The Help menu's items and keys (help-menu.tsx loads this when the menu first opens).

/** Mounted while the menu is open; `onClose(true)` also gives focus back to the trigger (Escape). */
export function HelpMenuItems({
  rootRef,
  onClose,
}: {
  rootRef: RefObject<HTMLDivElement | null>;
  onClose: (returnFocus: boolean) => void;
}) {
  useEffect(() => {
    const onPointer = (event: MouseEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) onClose(false);
    };
    // WAI-ARIA menu keys: focus starts on the first item; Escape returns it to the trigger; Tab closes.
    const items = () => [...(rootRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    items()[0]?.focus();
    const onKey = (event: KeyboardEvent) => {
      const list = items();
      const index = list.indexOf(document.activeElement as HTMLElement);
      const move = (to: number) => {
        event.preventDefault();
        list[(to + list.length) % list.length]?.focus();
      };
      if (event.key === 'Escape') onClose(true);
      else if (event.key === 'Tab') onClose(false);
      else if (event.key === 'ArrowDown') move(index + 1);
      else if (event.key === 'ArrowUp') move(index < 0 ? list.length - 1 : index - 1);
      else if (event.key === 'Home') move(0);
      else if (event.key === 'End') move(list.length - 1);
    };
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [rootRef, onClose]);

  const itemClass =
    'block px-4 py-2 text-sm hover:bg-gray-100 focus:outline-none focus-visible:bg-gray-100 focus-visible:ring-2 focus-visible:ring-brand-600 focus-visible:ring-inset dark:hover:bg-gray-800 dark:focus-visible:bg-gray-800 dark:focus-visible:ring-blue-400';
  return (
    <div
      role="menu"
      className="absolute right-0 z-40 mt-2 w-44 rounded-md border border-gray-200 bg-white py-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
    >
      <a
        role="menuitem"
        tabIndex={-1}
        href={links.documentation}
        target="_blank"
        rel="noreferrer"
        className={itemClass}
        onClick={() => onClose(false)}
      >
        {t('shell.documentation')}
      </a>
      <a
        role="menuitem"
        tabIndex={-1}
        href={links.contact}
        target="_blank"
        rel="noreferrer"
        className={itemClass}
        onClick={() => onClose(false)}
      >
        {t('shell.contact')}
      </a>
    </div>
  );
}
