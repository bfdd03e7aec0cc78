import type { ReactNode } from 'react';
import { useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { DotsIcon } from './icons';
import { t } from '../../i18n/i18n';

export type MenuItem = {
  label: string;
  onSelect: () => void;
  isDanger?: boolean;
  isHidden?: boolean;
  isDisabled?: boolean;
};

/** Below the button, or above it when the list would run off the bottom of the window. */
type Position = { top?: number; bottom?: number; right: number };

/** Rendered height of one item (py-2 + text-sm line) and of the list's padding and border. */
const ITEM_HEIGHT_PX = 36;
const LIST_CHROME_PX = 10;

function placeBelowOrAbove(rect: DOMRect, itemCount: number): Position {
  const right = window.innerWidth - rect.right;
  const height = itemCount * ITEM_HEIGHT_PX + LIST_CHROME_PX;
  const fitsBelow = rect.bottom + 4 + height <= window.innerHeight;
  return fitsBelow || rect.top - 4 - height < 0
    ? { top: rect.bottom + 4, right }
    : { bottom: window.innerHeight - rect.top + 4, right };
}

/**
 * A row action menu. The list is fixed-positioned in a portal so a table's horizontal scroll container does not
 * clip it. Closes on Escape, on a click outside and after a choice. A scroll or resize (a phone's address bar
 * hiding, a live row update moving the table) moves it along with its button; only once the button has left the
 * window does it close.
 */
export function ActionMenu({
  items,
  label = t('ui.actions'),
  trigger,
}: {
  items: MenuItem[];
  label?: string;
  trigger?: ReactNode;
}) {
  const [position, setPosition] = useState<Position | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const visible = items.filter((item) => !item.isHidden);
  const isOpen = position !== null;
  const itemCount = visible.length;

  useEffect(() => {
    if (!isOpen) return;
    const close = () => setPosition(null);
    const follow = () => {
      const rect = buttonRef.current?.getBoundingClientRect();
      const isInWindow = rect !== undefined && rect.bottom > 0 && rect.top < window.innerHeight && rect.width > 0;
      setPosition(isInWindow ? placeBelowOrAbove(rect, itemCount) : null);
    };
    const onPointer = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!listRef.current?.contains(target) && !buttonRef.current?.contains(target)) close();
    };
    // WAI-ARIA menu keys. Escape and Tab hand focus back to the trigger, so it never falls to the body (the list
    // is in a portal at the end of the body); Tab then moves on from the trigger as it would without the menu.
    const onKey = (event: KeyboardEvent) => {
      const items = [
        ...(listRef.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]:not(:disabled)') ?? []),
      ];
      const index = items.indexOf(document.activeElement as HTMLButtonElement);
      const move = (to: number) => {
        event.preventDefault();
        items[(to + items.length) % items.length]?.focus({ preventScroll: true });
      };
      if (event.key === 'Escape') {
        close();
        buttonRef.current?.focus();
      } else if (event.key === 'Tab') {
        close();
        buttonRef.current?.focus();
      } else if (event.key === 'ArrowDown') move(index + 1);
      else if (event.key === 'ArrowUp') move(index < 0 ? items.length - 1 : index - 1);
      else if (event.key === 'Home') move(0);
      else if (event.key === 'End') move(items.length - 1);
    };
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    window.addEventListener('resize', follow);
    window.addEventListener('scroll', follow, true);
    // preventScroll: opening the menu must not scroll the page under it.
    listRef.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus({ preventScroll: true });
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
      window.removeEventListener('resize', follow);
      window.removeEventListener('scroll', follow, true);
    };
  }, [isOpen, itemCount]);

  if (visible.length === 0) return null;

  const toggle = () => {
    if (position) {
      setPosition(null);
      return;
    }
    const rect = buttonRef.current?.getBoundingClientRect();
    if (!rect) return;
    setPosition(placeBelowOrAbove(rect, visible.length));
  };

  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        aria-label={label}
        aria-haspopup="menu"
        aria-expanded={position !== null}
        onClick={toggle}
        className="rounded p-1.5 text-gray-500 hover:bg-gray-100 hover:text-gray-900 dark:hover:bg-gray-800 dark:hover:text-gray-100"
      >
        {trigger ?? <DotsIcon className="size-5" />}
      </button>
      {position &&
        createPortal(
          <div
            ref={listRef}
            role="menu"
            aria-label={label}
            style={position}
            className="fixed z-40 min-w-44 rounded-md border border-gray-200 bg-white py-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
          >
            {visible.map((item) => (
              <button
                key={item.label}
                type="button"
                role="menuitem"
                disabled={item.isDisabled}
                tabIndex={-1}
                onClick={() => {
                  setPosition(null);
                  // A dialog the item opens returns focus to what had it: the trigger, not the removed item.
                  buttonRef.current?.focus();
                  item.onSelect();
                }}
                className={`block w-full px-4 py-2 text-left text-sm hover:bg-gray-100 focus:bg-gray-100 focus:outline-none focus-visible:ring-2 focus-visible:ring-brand-600 focus-visible:ring-inset dark:focus-visible:ring-blue-400 disabled:opacity-50 dark:hover:bg-gray-800 dark:focus:bg-gray-800 ${item.isDanger ? 'text-red-600 dark:text-red-400' : ''}`}
              >
                {item.label}
              </button>
            ))}
          </div>,
          document.body,
        )}
    </>
  );
}
