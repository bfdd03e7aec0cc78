import { Link } from '@tanstack/react-router';
import { CodeIcon, GearIcon, MenuIcon } from '../components/ui/icons';
import { t } from '../i18n/i18n';
import { links } from '../lib/links';
import { LanguageMenu } from './language-menu';
import { FindTrigger } from './find-trigger';
import { HelpMenu } from './help-menu';
import { SignedInAs } from './signed-in-as';
import { SignOutButton } from './sign-out-button';
import { ThemeToggle } from './theme-toggle';

export function TopBar({ onOpenSidebar }: { onOpenSidebar: () => void }) {
  return (
    <header className="sticky top-0 z-20 flex h-16 items-center gap-2 border-b border-gray-200 bg-white/90 px-4 backdrop-blur dark:border-gray-800 dark:bg-gray-900/90">
      <button
        type="button"
        data-sidebar-trigger
        aria-label={t('shell.openSidebar')}
        aria-controls="sidebar"
        onClick={onOpenSidebar}
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 lg:hidden dark:hover:bg-gray-800"
      >
        <MenuIcon className="size-5" />
      </button>
      <div className="flex-1" />
      <SignedInAs className="hidden max-w-64 md:block" />
      <FindTrigger />
      <a
        href={links.sourceRepository}
        target="_blank"
        rel="noreferrer"
        aria-label={t('shell.sourceRepository')}
        title={t('shell.sourceRepository')}
        className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <CodeIcon className="size-5" />
      </a>
      <HelpMenu />
      {/* Labelled, with the account's settings (password, two-factor sign-in); on phones it is in the sidebar. */}
      <Link
        to="/settings"
        activeProps={{ 'aria-current': 'page' }}
        className="hidden items-center gap-1.5 rounded-md px-2 py-2 text-sm font-medium text-gray-600 hover:bg-gray-100 lg:flex dark:text-gray-300 dark:hover:bg-gray-800"
      >
        <GearIcon className="size-5" />
        {t('shell.settings')}
      </Link>
      <LanguageMenu className="hidden md:block" />
      <ThemeToggle />
      <SignOutButton />
    </header>
  );
}
