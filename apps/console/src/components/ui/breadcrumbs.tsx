import { Link } from '@tanstack/react-router';
import { Fragment } from 'react';
import { ChevronRightIcon } from './icons';
import { t } from '../../i18n/i18n';

/** A crumb with `to` is a link; the last crumb is usually plain text (the current page). */
export type Crumb = { label: string; to?: string };

export function Breadcrumbs({ items }: { items: Crumb[] }) {
  return (
    <nav aria-label={t('ui.breadcrumb')} className="mb-4 text-sm">
      <ol className="flex flex-wrap items-center gap-1 text-gray-500 dark:text-gray-400">
        {items.map((item, index) => (
          <Fragment key={`${item.label}-${index}`}>
            {index > 0 && <ChevronRightIcon className="size-4" />}
            <li>
              {item.to ? (
                <Link to={item.to} className="hover:text-brand-600 hover:underline">
                  {item.label}
                </Link>
              ) : (
                <span aria-current="page" className="font-medium text-gray-900 dark:text-gray-100">
                  {item.label}
                </span>
              )}
            </li>
          </Fragment>
        ))}
      </ol>
    </nav>
  );
}
