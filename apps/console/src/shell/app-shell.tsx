import { Outlet } from '@tanstack/react-router';
import { Suspense, useRef } from 'react';
import { Spinner } from '../components/ui/spinner';
import { ConnectionBanner, NavigationProgress } from './connection-banner';
import { RouteAnnouncer } from './route-announcer';
import { Sidebar } from './sidebar';
import { TopBar } from './top-bar';
import { useSidebarState } from './use-sidebar-state';

export function AppShell() {
  const sidebar = useSidebarState();
  const mainRef = useRef<HTMLElement>(null);
  return (
    <div className="flex min-h-screen">
      <Sidebar
        isExpanded={sidebar.isExpanded}
        onToggleExpanded={sidebar.toggleExpanded}
        isMobileOpen={sidebar.isMobileOpen}
        onCloseMobile={sidebar.closeMobile}
      />
      <div className="flex min-w-0 flex-1 flex-col">
        <NavigationProgress />
        <TopBar onOpenSidebar={sidebar.openMobile} />
        <ConnectionBanner />
        <main ref={mainRef} className="mx-auto w-full max-w-7xl flex-1 px-4 py-6 sm:px-6 lg:px-8">
          <Suspense fallback={<Spinner className="mx-auto size-8" />}>
            <Outlet />
          </Suspense>
        </main>
        <RouteAnnouncer containerRef={mainRef} />
      </div>
    </div>
  );
}
