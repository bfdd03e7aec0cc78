import { Link } from '@tanstack/react-router';
import { buttonClasses } from '../components/ui/button';
import { t } from '../i18n/i18n';

/** The spec's English text (catalogs/en.json `notFound.text`). */
export const NOT_FOUND_TEXT = "Hmm...this page doesn't exist. Try searching for something else!";

export function NotFoundPage() {
  return (
    <div className="flex min-h-[60vh] flex-col items-center justify-center gap-4 px-4 text-center">
      <h1 className="text-6xl font-bold text-brand-600">
        404<span className="sr-only"> {t('notFound.label')}</span>
      </h1>
      <p className="max-w-md text-gray-600 dark:text-gray-300">{t('notFound.text')}</p>
      <Link to="/" className={buttonClasses('primary')}>
        {t('notFound.back')}
      </Link>
    </div>
  );
}
