import { storageKeys } from '@postern/contract';
import { useCallback, useState } from 'react';

// Desktop: expanded (labels) or collapsed (icons), remembered under `sidebar-expanded`, default collapsed
// (the spec's "Business constants and limits"). Mobile: an overlay that is open or closed, never remembered.

export function readSidebarExpanded(): boolean {
  return localStorage.getItem(storageKeys.sidebarExpanded) === 'true';
}

export function useSidebarState() {
  const [isExpanded, setExpanded] = useState(readSidebarExpanded);
  const [isMobileOpen, setMobileOpen] = useState(false);

  const toggleExpanded = useCallback(() => {
    setExpanded((current) => {
      localStorage.setItem(storageKeys.sidebarExpanded, String(!current));
      return !current;
    });
  }, []);

  const openMobile = useCallback(() => setMobileOpen(true), []);
  const closeMobile = useCallback(() => setMobileOpen(false), []);
  return { isExpanded, toggleExpanded, isMobileOpen, openMobile, closeMobile };
}
