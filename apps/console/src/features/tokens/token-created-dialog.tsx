import type { PersonalAccessTokenCreated } from '@postern/contract';
import type { ReactNode } from 'react';
import { CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { links } from '../../lib/links';
import { formatDate } from '../../i18n/format';
import { t } from '../../i18n/i18n';

const link = (href: string, text: string) => (
  <a key={href} className="text-brand-600 underline" href={href} target="_blank" rel="noreferrer">
    {text}
  </a>
);

/** Where to use the token: three links placed where the language puts them. */
function UseWith() {
  const slots: Record<string, ReactNode> = {
    '\uE000': link(links.cliInstall, t('tokens.created.cli')),
    '\uE001': link(links.nodeClientImage, t('tokens.created.image')),
    '\uE002': link(links.nodeHelmChart, t('tokens.created.chart')),
  };
  const text = t('tokens.created.useWith', { cli: '\uE000', image: '\uE001', chart: '\uE002' });
  return (
    <p className="text-gray-600 dark:text-gray-400">
      {text.split(/([\uE000-\uE002])/).map((part) => slots[part] ?? part)}
    </p>
  );
}

/** The one time a token's secret is shown (the spec's "Screens and routes"). */
export function TokenCreatedDialog({
  token,
  onClose,
}: {
  token: PersonalAccessTokenCreated | null;
  onClose: () => void;
}) {
  return (
    <InfoDialog open={token !== null} title={t('tokens.created.title')} onClose={onClose}>
      {token && (
        <>
          <p>{t('tokens.created.text')}</p>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
            <dt className="font-medium">{t('tokens.created.name')}</dt>
            <dd>{token.name}</dd>
            {token.expireAt && (
              <>
                <dt className="font-medium">{t('tokens.created.expires')}</dt>
                <dd>{formatDate(token.expireAt)}</dd>
              </>
            )}
          </dl>
          <CopyField label={t('tokens.created.token')} copyLabel={t('tokens.created.copy')} value={token.token} />
          <p className="rounded-md bg-yellow-50 px-3 py-2 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100">
            {t('tokens.created.once')}
          </p>
          <UseWith />
        </>
      )}
    </InfoDialog>
  );
}
