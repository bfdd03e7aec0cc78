/**
 * Each language's catalogue is split at build (i18n-catalogs.ts) into parts fetched as they are needed, so a first
 * visit stays within its JavaScript budget: `first`, what a first page shows (sign-in, the shell, the home page's
 * heading, not-found), before the first render; `signin`, the sign-in pages' texts, with them (a signed-in first visit
 * does not need them); `home`, the home page's overview, with it; `more`, every other screen's texts, with that
 * screen (`withMoreTexts`, which brings `home` and `signin` too).
 */
export type Part = 'first' | 'signin' | 'home' | 'more';

const FIRST = ['common.', 'field.', 'language.', 'shell.', 'nav.', 'role.', 'notFound.'];
const FIRST_IDS = ['home.title', 'home.intro', 'home.loadingOverview'];
const HOME = ['home.', 'attention.', 'totals.', 'certificate.', 'status.', 'chart.'];

export function partOf(id: string): Part {
  if (FIRST_IDS.includes(id) || FIRST.some((prefix) => id.startsWith(prefix))) return 'first';
  if (id.startsWith('login.')) return 'signin';
  return HOME.some((prefix) => id.startsWith(prefix)) ? 'home' : 'more';
}
