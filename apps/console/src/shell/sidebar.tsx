import { ESCAPE_KEY_CODE, type Permission } from '@postern/contract';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import {
  ChevronLeftIcon,
  ChevronRightIcon,
  GearIcon,
  GlobeIcon,
  HomeIcon,
  LayersIcon,
  ListIcon,
  ServerIcon,
  ShieldIcon,
  UsersIcon,
} from '../components/ui/icons';
import { t, type MessageId } from '../i18n/i18n';
import { useCan, useSeesEveryNode } from '../queries/account';
import { LanguageMenu } from './language-menu';
import { SignedInAs } from './signed-in-as';

type NavItem = {
  label: MessageId;
  to: '/' | '/domains' | '/nodes' | '/services' | '/certificates' | '/audit' | '/accounts' | '/settings';
  icon: ReactNode;
  /** Shown only to roles that hold it (the contract's role table). */
  permission?: Permission;
  /** Shown only to accounts that see every node (the page spans nodes; docs/api.md "Node scope"). */
  isForEveryNode?: boolean;
  /** Extra classes of the item (Settings is in the top bar on desktop). */
  className?: string;
};

/** The 'Pages' group (the spec's "Screens and routes"): its three entries, as the spec words them. */
const pages: NavItem[] = [
  { label: 'nav.home', to: '/', icon: <HomeIcon className="size-5 shrink-0" /> },
  { label: 'nav.domains', to: '/domains', icon: <GlobeIcon className="size-5 shrink-0" /> },
  { label: 'nav.nodes', to: '/nodes', icon: <ServerIcon className="size-5 shrink-0" /> },
];

/** Beyond the spec: every service across nodes, the audit log and, on phones, Settings. */
const operations: NavItem[] = [
  { label: 'nav.services', to: '/services', icon: <LayersIcon className="size-5 shrink-0" /> },
  {
    label: 'nav.certificates',
    to: '/certificates',
    icon: <ShieldIcon className="size-5 shrink-0" />,
    isForEveryNode: true,
  },
  { label: 'nav.audit', to: '/audit', icon: <ListIcon className="size-5 shrink-0" />, isForEveryNode: true },
  { label: 'nav.accounts', to: '/accounts', icon: <UsersIcon className="size-5 shrink-0" />, permission: 'accounts' },
  { label: 'nav.settings', to: '/settings', icon: <GearIcon className="size-5 shrink-0" />, className: 'lg:hidden' },
];

const groups: { title: MessageId; items: NavItem[] }[] = [
  { title: 'nav.pages', items: pages },
  { title: 'nav.operations', items: operations },
];

/** Tailwind's `lg`: from this width the sidebar is part of the page, below it an overlay. */
const DESKTOP_QUERY = '(min-width: 1024px)';
const subscribeDesktop = (onChange: () => void) => {
  const query = window.matchMedia(DESKTOP_QUERY);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
};
const isDesktopWidth = () => window.matchMedia(DESKTOP_QUERY).matches;

type SidebarProps = {
  isExpanded: boolean;
  onToggleExpanded: () => void;
  isMobileOpen: boolean;
  onCloseMobile: () => void;
};

export function Sidebar({ isExpanded, onToggleExpanded, isMobileOpen, onCloseMobile }: SidebarProps) {
  const panelRef = useRef<HTMLElement>(null);
  const isDesktop = useSyncExternalStore(subscribeDesktop, isDesktopWidth);
  // A closed overlay is only moved out of view: inert keeps its links out of the Tab order and the accessibility tree.
  const isHidden = !isDesktop && !isMobileOpen;
  const mayManageAccounts = useCan('accounts');
  const seesEveryNode = useSeesEveryNode();
  const isShown = (item: NavItem) =>
    (item.permission !== 'accounts' || mayManageAccounts) && (!item.isForEveryNode || seesEveryNode);

  // On mobile, Escape or a click outside closes the open sidebar.
  useEffect(() => {
    if (!isMobileOpen) return;
    // The opened overlay takes focus; Escape hands it back to the button that opened it.
    panelRef.current?.querySelector<HTMLElement>('a[href]')?.focus();
    const onKey = (event: KeyboardEvent) => {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the spec names the key by its code (27)
      if (event.key === 'Escape' || event.keyCode === ESCAPE_KEY_CODE) {
        onCloseMobile();
        document.querySelector<HTMLElement>('[data-sidebar-trigger]')?.focus();
      }
    };
    const onPointer = (event: MouseEvent) => {
      const target = event.target as Element;
      if (!panelRef.current?.contains(target) && !target.closest('[data-sidebar-trigger]')) onCloseMobile();
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onPointer);
    };
  }, [isMobileOpen, onCloseMobile]);

  // Labels show on desktop when expanded, and always in the mobile overlay.
  const labelClass = isExpanded ? 'lg:inline' : 'lg:hidden';
  return (
    <>
      {isMobileOpen && <div className="fixed inset-0 z-30 bg-gray-900/50 lg:hidden" aria-hidden="true" />}
      <aside
        ref={panelRef}
        id="sidebar"
        aria-label={t('shell.sidebar')}
        data-expanded={isExpanded}
        data-mobile-open={isMobileOpen}
        inert={isHidden}
        className={`fixed inset-y-0 left-0 z-40 flex w-64 flex-col border-r border-gray-200 bg-white transition-transform dark:border-gray-800 dark:bg-gray-900 lg:static lg:translate-x-0 ${isMobileOpen ? 'translate-x-0' : '-translate-x-full'} ${isExpanded ? 'lg:w-64' : 'lg:w-16'}`}
      >
        <div className="flex h-16 items-center gap-2 px-4">
          <ShieldIcon className="size-7 shrink-0 text-brand-600" />
          <span className={`text-lg font-bold ${labelClass}`}>Postern</span>
        </div>
        {/* On phones the top bar has no room for it. */}
        <SignedInAs className="px-4 md:hidden" wrap />
        <LanguageMenu className="px-4 pt-2 md:hidden" />
        <nav className="flex flex-1 flex-col gap-4 px-2 py-4">
          {groups.map((group) => (
            <div key={group.title}>
              <h3
                className={`px-3 pb-2 text-xs font-semibold tracking-wider text-gray-600 uppercase dark:text-gray-400 ${labelClass}`}
              >
                {t(group.title)}
              </h3>
              <ul className="flex flex-col gap-1">
                {group.items.filter(isShown).map((item) => (
                  <li key={item.to} className={item.className}>
                    <Link
                      to={item.to}
                      onClick={onCloseMobile}
                      title={t(item.label)}
                      activeOptions={{ exact: item.to === '/' }}
                      activeProps={{ className: 'bg-brand-50 text-brand-700 dark:bg-gray-800 dark:text-white' }}
                      inactiveProps={{
                        className: 'text-gray-600 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800',
                      }}
                      className="flex items-center gap-3 rounded-md px-3 py-2 text-sm font-medium"
                    >
                      {item.icon}
                      <span className={labelClass}>{t(item.label)}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <div className="hidden border-t border-gray-200 p-2 lg:block dark:border-gray-800">
          <button
            type="button"
            onClick={onToggleExpanded}
            aria-label={isExpanded ? t('shell.collapseSidebar') : t('shell.expandSidebar')}
            aria-expanded={isExpanded}
            className="flex w-full items-center justify-center rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
          >
            {isExpanded ? <ChevronLeftIcon className="size-5" /> : <ChevronRightIcon className="size-5" />}
          </button>
        </div>
      </aside>
    </>
  );
}
