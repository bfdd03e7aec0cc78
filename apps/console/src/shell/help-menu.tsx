import { useEffect, useRef, useState } from 'react';
import { HelpIcon } from '../components/ui/icons';
import { links } from '../lib/links';

/** Help menu of the top bar: Documentation and Contact us (console-spec §2). */
export function HelpMenu() {
  const [isOpen, setOpen] = useState(false);
  const rootRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!isOpen) return;
    const onPointer = (event: MouseEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && setOpen(false);
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [isOpen]);

  const itemClass = 'block px-4 py-2 text-sm hover:bg-gray-100 dark:hover:bg-gray-800';
  return (
    <div ref={rootRef} className="relative">
      <button
        type="button"
        aria-label="Help"
        aria-haspopup="menu"
        aria-expanded={isOpen}
        onClick={() => setOpen((open) => !open)}
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <HelpIcon className="size-5" />
      </button>
      {isOpen && (
        <div role="menu" className="absolute right-0 z-40 mt-2 w-44 rounded-md border border-gray-200 bg-white py-1 shadow-lg dark:border-gray-700 dark:bg-gray-900">
          <a role="menuitem" href={links.documentation} target="_blank" rel="noreferrer" className={itemClass} onClick={() => setOpen(false)}>
            Documentation
          </a>
          <a role="menuitem" href={links.contact} target="_blank" rel="noreferrer" className={itemClass} onClick={() => setOpen(false)}>
            Contact us
          </a>
        </div>
      )}
    </div>
  );
}
