import { Link } from '@tanstack/react-router';
import { CodeIcon, MenuIcon, ShieldIcon } from '../components/ui/icons';
import { links } from '../lib/links';
import { FindServiceTrigger } from './find-service-trigger';
import { HelpMenu } from './help-menu';
import { SignOutButton } from './sign-out-button';
import { ThemeToggle } from './theme-toggle';

export function TopBar({ onOpenSidebar }: { onOpenSidebar: () => void }) {
  return (
    <header className="sticky top-0 z-20 flex h-16 items-center gap-2 border-b border-gray-200 bg-white/90 px-4 backdrop-blur dark:border-gray-800 dark:bg-gray-900/90">
      <button
        type="button"
        data-sidebar-trigger
        aria-label="Open sidebar"
        aria-controls="sidebar"
        onClick={onOpenSidebar}
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 lg:hidden dark:hover:bg-gray-800"
      >
        <MenuIcon className="size-5" />
      </button>
      <div className="flex-1" />
      <FindServiceTrigger />
      <a
        href={links.sourceRepository}
        target="_blank"
        rel="noreferrer"
        aria-label="Source repository"
        title="Source repository"
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <CodeIcon className="size-5" />
      </a>
      <HelpMenu />
      <Link
        to="/settings"
        aria-label="Settings"
        title="Settings"
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <ShieldIcon className="size-5" />
      </Link>
      <ThemeToggle />
      <SignOutButton />
    </header>
  );
}
