import { Link } from '@tanstack/react-router';
import { Fragment, type ReactNode } from 'react';
import { t } from '../../i18n/i18n';

// The home page of an account limited to some nodes (docs/api.md "Node scope"). A module of its own, loaded with the
// texts of the other screens (`more`): the first page's texts and the operators' home page stay as small as they are.

const linkClass = 'font-medium text-brand-600 underline dark:text-blue-400';

/** A message with links in it, in the language's own word order: each `\u0000name\u0000` becomes its link. */
const withLinks = (text: string, links: Record<string, ReactNode>): ReactNode[] =>
  text.split('\u0000').map((part, index) => (index % 2 === 1 ? <Fragment key={part}>{links[part]}</Fragment> : part));

/**
 * Where its things are. `shown`: the count in the language's figures (format.ts, passed in: importing it here split a
 * chunk off the first page's entry).
 */
export function ScopedHome({ nodeCount, shown }: { nodeCount: number; shown: string }) {
  const text = t('scopedHome.text', {
    count: nodeCount,
    shown,
    services: '\u0000services\u0000',
    nodes: '\u0000nodes\u0000',
  });
  return (
    <section aria-labelledby="limited-home-title" className="flex flex-col gap-2">
      <h2 id="limited-home-title" className="text-lg font-semibold">
        {t('scopedHome.title')}
      </h2>
      <p className="max-w-3xl text-sm text-gray-600 dark:text-gray-300">
        {withLinks(text, {
          services: (
            <Link to="/services" className={linkClass}>
              {t('nav.services')}
            </Link>
          ),
          nodes: (
            <Link to="/nodes" className={linkClass}>
              {t('nav.nodes')}
            </Link>
          ),
        })}
      </p>
    </section>
  );
}
