import type { Theme } from '@postern/contract';
import { storageKeys, themes } from '@postern/contract';

// Theme light, dark or auto (the spec's "States and transitions"), kept in localStorage. index.html applies it before
// first paint; this module keeps it applied afterwards, following the OS while in auto.

const darkQuery = () => window.matchMedia('(prefers-color-scheme: dark)');

export function readTheme(): Theme {
  const stored = localStorage.getItem(storageKeys.theme);
  return themes.find((theme) => theme === stored) ?? 'auto';
}

export function applyTheme(theme: Theme): void {
  const isDark = theme === 'dark' || (theme === 'auto' && darkQuery().matches);
  document.documentElement.classList.toggle('dark', isDark);
}

export function storeTheme(theme: Theme): void {
  localStorage.setItem(storageKeys.theme, theme);
  applyTheme(theme);
}

/** Re-applies 'auto' when the OS preference changes; returns the unsubscribe function. */
export function followSystemTheme(): () => void {
  const query = darkQuery();
  const onChange = () => {
    if (readTheme() === 'auto') applyTheme('auto');
  };
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}
