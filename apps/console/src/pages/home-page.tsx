import { lazy, Suspense } from 'react';
import { t, withTexts } from '../i18n/i18n';
import { Spinner } from '../components/ui/spinner';

// What the gateway holds decides what the page shows (features/home): the welcome cards while it holds nothing,
// what needs attention once it is in use. That part loads after the heading has painted, keeping the first page small.
const HomeOverview = lazy(() =>
  withTexts('home', import('../features/home/home-overview')).then((module) => ({ default: module.HomeOverview })),
);

export function HomePage() {
  return (
    <div className="flex flex-col gap-8">
      <header className="flex flex-col gap-2">
        <h1 className="text-2xl font-bold">{t('home.title')}</h1>
        <p className="max-w-3xl text-gray-600 dark:text-gray-300">{t('home.intro')}</p>
      </header>
      <Suspense
        fallback={
          <div className="flex justify-center py-8">
            <Spinner label={t('home.loadingOverview')} />
          </div>
        }
      >
        <HomeOverview />
      </Suspense>
    </div>
  );
}
