import {
  ShareLinkCreateSchema,
  type HttpService,
  type ShareLinkCreate,
  type ShareLinkCreated,
} from '@postern/contract';
import { z } from 'zod';
import { CopyField } from '../../components/ui/copy-button';
import { FormDialog, InfoDialog } from '../../components/ui/dialog';
import { SelectField, TextField } from '../../components/ui/form-field';
import { useZodForm } from '../../lib/use-zod-form';
import { useCreateShareLink } from '../../queries/access';
import { formatDate, formatDateTime } from '../../i18n/format';
import { activeLanguage, SOURCE_LANGUAGE, t } from '../../i18n/i18n';
import { formatDuration } from './access-form-rules';

// Creating a share link, and the one time its URL is shown (like the spec's token dialogs).

/** The expiries offered, named in the language of this render ('' : none). */
export const shareLinkExpiries = () => [
  ...[3600, 86_400, 604_800, 2_592_000].map((seconds) => ({ value: String(seconds), label: formatDuration(seconds) })),
  { value: '', label: t('access.share.noExpiry') },
];

export type ShareLinkFormValues = { name: string; pathPrefix: string; expiry: string };

const initialValues: ShareLinkFormValues = { name: '', pathPrefix: '', expiry: '604800' };

/** The request body: an empty path is the whole service, the expiry a ttl counted on the gateway's clock. */
export const toShareLinkBody = (values: ShareLinkFormValues): Record<string, unknown> => ({
  name: values.name,
  pathPrefix: values.pathPrefix.trim() === '' ? null : values.pathPrefix,
  ...(values.expiry === '' ? {} : { ttl: Number(values.expiry) }),
});

const formSchema = z
  .custom<ShareLinkFormValues>()
  .transform((values) => toShareLinkBody(values))
  .pipe(ShareLinkCreateSchema);

export function ShareLinkFormDialog({
  service,
  onClose,
  onCreated,
}: {
  service: HttpService;
  onClose: () => void;
  onCreated: (link: ShareLinkCreated) => void;
}) {
  const form = useZodForm(formSchema, initialValues);
  const create = useCreateShareLink({ nodeId: service.nodeId, id: service.id });
  const onSubmit = form.handleSubmit(async (body: ShareLinkCreate) => {
    const created = await create.mutateAsync(body);
    onCreated(created);
  });
  return (
    <FormDialog
      open
      size="small"
      title={t('access.share.title')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        label={t('access.column.name')}
        placeholder={t('access.share.namePlaceholder')}
        required
        autoComplete="off"
        {...form.field('name')}
      />
      <TextField
        label={t('access.share.path')}
        placeholder={service.pathLocation}
        description={t('access.share.pathHint', { path: service.pathLocation })}
        autoComplete="off"
        {...form.field('pathPrefix')}
      />
      <SelectField
        label={t('access.links.expires')}
        description={t('access.share.expiresHint')}
        options={shareLinkExpiries()}
        {...form.field('expiry')}
      />
    </FormDialog>
  );
}

/**
 * A share link's or visitor session's date and time: in English as these dialogs always showed it (the spec's date,
 * the browser's time of day), in the language's own form otherwise.
 */
export function accessDateTime(value: string): string {
  return activeLanguage() === SOURCE_LANGUAGE
    ? `${formatDate(value)} ${new Date(value).toLocaleTimeString()}`
    : formatDateTime(value);
}

/** Who may open what until when, one sentence per case so each language words it whole. */
function opensText({ pathPrefix, expiresAt }: ShareLinkCreated): string {
  const when = expiresAt ? accessDateTime(expiresAt) : null;
  if (pathPrefix)
    return when
      ? t('access.share.opensBelowUntil', { path: pathPrefix, when })
      : t('access.share.opensBelow', { path: pathPrefix });
  return when ? t('access.share.opensUntil', { when }) : t('access.share.opens');
}

/** The one time a share link's URL is shown: it carries the secret that lets its holder in. */
export function ShareLinkCreatedDialog({ link, onClose }: { link: ShareLinkCreated | null; onClose: () => void }) {
  return (
    <InfoDialog open={link !== null} title={t('access.share.createdTitle')} onClose={onClose}>
      {link && (
        <>
          <p>{opensText(link)}</p>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
            <dt className="font-medium">{t('access.column.name')}</dt>
            <dd>{link.name}</dd>
          </dl>
          <CopyField label={t('access.share.link')} copyLabel={t('access.share.copyLink')} value={link.url} />
          <p className="rounded-md bg-yellow-50 px-3 py-2 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100">
            {t('access.share.once')}
          </p>
        </>
      )}
    </InfoDialog>
  );
}
