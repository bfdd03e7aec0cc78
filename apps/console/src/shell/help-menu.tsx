import { useCallback, useRef, useState } from 'react';
import { HelpIcon } from '../components/ui/icons';
import { t } from '../i18n/i18n';
import type { HelpMenuItems } from './help-menu-items';

let loadedItems: typeof HelpMenuItems | null = null;

/** Help menu of the top bar: Documentation and Contact us (the spec's "Screens and routes"). */
export function HelpMenu() {
  const [isOpen, setOpen] = useState(false);
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  // The items and their keys are fetched on first use, or early when the pointer or focus reaches the button: the
  // shell's first page stays within its JS budget. A failed fetch (the gateway unreachable) closes the menu.
  const [Items, setItems] = useState<typeof HelpMenuItems | null>(() => loadedItems);
  const loadItems = useCallback(() => {
    if (loadedItems) return;
    import('./help-menu-items').then(
      (module) => {
        loadedItems = module.HelpMenuItems;
        setItems(() => module.HelpMenuItems);
      },
      () => setOpen(false),
    );
  }, []);

  const close = useCallback((returnFocus: boolean) => {
    setOpen(false);
    if (returnFocus) buttonRef.current?.focus();
  }, []);

  return (
    <div ref={rootRef} className="relative">
      <button
        ref={buttonRef}
        type="button"
        aria-label={t('shell.help')}
        aria-haspopup="menu"
        aria-expanded={isOpen}
        onClick={() => {
          setOpen((open) => !open);
          loadItems();
        }}
        onPointerEnter={() => loadItems()}
        onFocus={() => loadItems()}
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <HelpIcon className="size-5" />
      </button>
      {isOpen && Items && <Items rootRef={rootRef} onClose={close} />}
    </div>
  );
}
