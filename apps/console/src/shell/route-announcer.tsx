import { useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';

const APP_NAME = 'Postern';

/**
 * On every route change: the page's h1 names the document, a polite live region announces it, and focus moves to the
 * h1 so keyboard and screen-reader users start at the new page (and never on the body). Pages render lazily and
 * after their data, so the h1 is awaited (bounded) rather than read at once. The first load keeps focus where the
 * browser puts it.
 */
export function RouteAnnouncer({ containerRef }: { containerRef: React.RefObject<HTMLElement | null> }) {
  // The resolved location: while the next route loads, the old page (and its h1) is still on screen.
  const pathname = useRouterState({
    select: (state) => (state.status === 'idle' ? state.resolvedLocation?.pathname : undefined),
  });
  const [announcement, setAnnouncement] = useState('');
  // Only a new path counts: a search change (page, sort, filter) keeps the page and the user's place in it.
  const lastPath = useRef<string | undefined>(undefined);
  useEffect(() => {
    const container = containerRef.current;
    if (!container || pathname === undefined || pathname === lastPath.current) return undefined;
    const shouldFocus = lastPath.current !== undefined;
    lastPath.current = pathname;
    let done = false;
    const settle = (): boolean => {
      const heading = container.querySelector('h1');
      const title = heading?.textContent.trim();
      if (!heading || !title) return false;
      done = true;
      document.title = `${title} · ${APP_NAME}`;
      if (shouldFocus) {
        setAnnouncement(title);
        heading.tabIndex = -1;
        heading.focus({ preventScroll: false });
      }
      return true;
    };
    if (settle()) return undefined;
    const observer = new MutationObserver(() => {
      if (!done && settle()) observer.disconnect();
    });
    observer.observe(container, { childList: true, subtree: true, characterData: true });
    const stop = setTimeout(() => observer.disconnect(), 10_000);
    return () => {
      observer.disconnect();
      clearTimeout(stop);
    };
  }, [pathname, containerRef]);
  return (
    <div role="status" aria-live="polite" aria-atomic="true" className="sr-only" data-testid="route-announcer">
      {announcement}
    </div>
  );
}
