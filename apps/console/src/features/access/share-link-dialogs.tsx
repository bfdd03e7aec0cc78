import {
  formatDate,
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

// Creating a share link, and the one time its URL is shown (like the spec's token dialogs).

export const SHARE_LINK_EXPIRIES = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '', label: 'No expiry (until revoked)' },
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
      title="Create Share Link"
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField label="Name" placeholder="Who or what it is for" required autoComplete="off" {...form.field('name')} />
      <TextField
        label="Only below path (Optional)"
        placeholder={service.pathLocation}
        description={`Empty: the whole service (${service.pathLocation}). A path below it keeps the link's visitors there.`}
        autoComplete="off"
        {...form.field('pathPrefix')}
      />
      <SelectField
        label="Expires"
        description="The link and the sessions made with it end then; revoke it any time before."
        options={SHARE_LINK_EXPIRIES}
        {...form.field('expiry')}
      />
    </FormDialog>
  );
}

/** The one time a share link's URL is shown: it carries the secret that lets its holder in. */
export function ShareLinkCreatedDialog({ link, onClose }: { link: ShareLinkCreated | null; onClose: () => void }) {
  return (
    <InfoDialog open={link !== null} title="Share Link Created" onClose={onClose}>
      {link && (
        <>
          <p>
            Anyone with this link can open the service{link.pathPrefix ? ` below ${link.pathPrefix}` : ''}
            {link.expiresAt
              ? ` until ${formatDate(link.expiresAt)} ${new Date(link.expiresAt).toLocaleTimeString()}`
              : ' until you revoke it'}
            .
          </p>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
            <dt className="font-medium">Name</dt>
            <dd>{link.name}</dd>
          </dl>
          <CopyField label="Share link" value={link.url} />
          <p className="rounded-md bg-yellow-50 px-3 py-2 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100">
            The link is only visible once. Make sure to store it securely.
          </p>
        </>
      )}
    </InfoDialog>
  );
}
