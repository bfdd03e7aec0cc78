import type { Theme } from '@postern/contract';
import { useState } from 'react';
import { MonitorIcon, MoonIcon, SunIcon } from '../components/ui/icons';
import { t } from '../i18n/i18n';
import { readTheme, storeTheme } from '../lib/theme';

const order: Theme[] = ['light', 'dark', 'auto'];
const icons = { light: SunIcon, dark: MoonIcon, auto: MonitorIcon };

/** Cycles light → dark → auto; the choice is kept in localStorage. */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(readTheme);
  const next = order[(order.indexOf(theme) + 1) % order.length] ?? 'auto';
  const Icon = icons[theme];
  return (
    <button
      type="button"
      onClick={() => {
        storeTheme(next);
        setTheme(next);
      }}
      aria-label={t('shell.themeSwitch', { theme: t(`shell.theme.${theme}`), next: t(`shell.theme.${next}`) })}
      title={t('shell.theme', { theme: t(`shell.theme.${theme}`) })}
      data-theme={theme}
      className="rounded-md p-2 text-gray-500 hover:bg-gray-100 dark:text-gray-300 dark:hover:bg-gray-800"
    >
      <Icon className="size-5" />
    </button>
  );
}
