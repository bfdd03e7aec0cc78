/**
 * Each language's catalogue is split at build (i18n-catalogs.ts) into parts fetched as they are needed, so a first
 * visit stays within its JavaScript budget: `first`, what a first page shows (sign-in, the shell, the home page's
 * heading, not-found), before the first render; `home`, the home page's overview, with it; `more`, every other
 * screen's texts, with that screen (`withMoreTexts`, which brings `home` too).
 */
export type Part = 'first' | 'home' | 'more';

const FIRST = ['common.', 'field.', 'language.', 'login.', 'shell.', 'nav.', 'role.', 'notFound.'];
const FIRST_IDS = ['home.title', 'home.intro', 'home.loadingOverview'];
const HOME = ['home.', 'attention.', 'totals.', 'certificate.', 'status.', 'chart.'];

export function partOf(id: string): Part {
  if (FIRST_IDS.includes(id) || FIRST.some((prefix) => id.startsWith(prefix))) return 'first';
  return HOME.some((prefix) => id.startsWith(prefix)) ? 'home' : 'more';
}
