import {
  ACCESS_PATH,
  IdentityProviderDiscoverSchema,
  toFieldErrors,
  type IdentityProvider,
  type IdentityProviderDiscovery,
} from '@postern/contract';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { FormDialog } from '../../components/ui/dialog';
import { CheckboxField, TextField } from '../../components/ui/form-field';
import { useToast } from '../../components/ui/toast';
import { isApiError } from '../../lib/api';
import { useZodForm } from '../../lib/use-zod-form';
import {
  useCreateIdentityProvider,
  useDiscoverIdentityProvider,
  useUpdateIdentityProvider,
} from '../../queries/access';
import { getInitialProviderValues, makeProviderFormSchema } from './provider-form-rules';
import { t, withSlot } from '../../i18n/i18n';

// Add or edit an OpenID Connect provider (beyond the console spec; docs/ACCESS.md). "Test connection" runs discovery
// through the gateway (the gateway, not the browser, talks to the provider) and shows what it found or why not.

type Discovery =
  { status: 'idle' } | { status: 'found'; found: IdentityProviderDiscovery } | { status: 'failed'; message: string };

function DiscoveryResult({ discovery }: { discovery: Discovery }) {
  if (discovery.status === 'idle') return null;
  if (discovery.status === 'failed')
    return (
      <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
        {discovery.message}
      </p>
    );
  const { found } = discovery;
  const rows: [string, string][] = [
    [t('access.idp.issuer'), found.issuer],
    [t('access.idp.signInEndpoint'), found.authorizationEndpoint],
    [t('access.idp.tokenEndpoint'), found.tokenEndpoint],
    [t('access.idp.userinfoEndpoint'), found.userinfoEndpoint ?? t('access.idp.none')],
    ['PKCE (S256)', t(found.supportsPkce ? 'access.idp.supported' : 'access.idp.pkceNotAnnounced')],
    [
      t('access.idp.scopesOffered'),
      found.scopesSupported.length > 0 ? found.scopesSupported.join(' ') : t('access.idp.notAnnounced'),
    ],
  ];
  return (
    <div
      role="status"
      aria-label={t('access.idp.testResult')}
      className="rounded-md bg-green-50 px-3 py-2 text-sm text-green-900 dark:bg-green-950 dark:text-green-100"
    >
      <p className="font-medium">{t('access.idp.answered')}</p>
      <dl className="mt-1 grid grid-cols-1 gap-x-3 sm:grid-cols-[auto_1fr]">
        {rows.map(([label, value]) => (
          <div key={label} className="contents">
            <dt className="font-medium">{label}</dt>
            <dd className="break-all">{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

function ProviderForm({ provider, onClose }: { provider?: IdentityProvider | undefined; onClose: () => void }) {
  const isEdit = provider !== undefined;
  const [schema] = useState(() => makeProviderFormSchema(isEdit));
  const form = useZodForm(schema, getInitialProviderValues(provider));
  const create = useCreateIdentityProvider();
  const update = useUpdateIdentityProvider();
  const discover = useDiscoverIdentityProvider();
  const [discovery, setDiscovery] = useState<Discovery>({ status: 'idle' });
  const { toast } = useToast();

  const onSubmit = form.handleSubmit(async (body) => {
    if (provider) await update.mutateAsync({ id: provider.id, body });
    else await create.mutateAsync(body);
    toast({ message: t(isEdit ? 'access.idp.updated' : 'access.idp.added'), type: 'success' });
    onClose();
  });

  const testConnection = async () => {
    const checked = IdentityProviderDiscoverSchema.safeParse({ issuer: form.values.issuer });
    if (!checked.success) {
      form.touch('issuer');
      setDiscovery({
        status: 'failed',
        message: toFieldErrors(checked.error)[0]?.message ?? t('access.idp.notIssuer'),
      });
      return;
    }
    setDiscovery({ status: 'idle' });
    try {
      setDiscovery({ status: 'found', found: await discover.mutateAsync(checked.data.issuer) });
    } catch (error) {
      const message = isApiError(error)
        ? (error.fieldErrors[0]?.message ?? error.serverMessage ?? error.message)
        : t('access.idp.testFailed');
      setDiscovery({ status: 'failed', message });
    }
  };

  const secretHelp = t(
    !isEdit ? 'access.idp.secretNew' : provider.hasClientSecret ? 'access.idp.secretStored' : 'access.idp.secretNone',
  );
  const [beforeUri, afterUri] = withSlot('access.idp.redirect', 'uri');

  return (
    <FormDialog
      open
      size="medium"
      title={t(isEdit ? 'access.idp.editTitle' : 'access.idp.addTitle')}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField
        label={t('access.column.name')}
        placeholder="Google, Keycloak, Authentik…"
        required
        {...form.field('name')}
      />
      <div className="flex flex-col gap-2">
        <TextField
          label={t('access.idp.issuerUrl')}
          placeholder="https://accounts.google.com"
          description={t('access.idp.issuerHint')}
          required
          autoComplete="off"
          {...form.field('issuer')}
        />
        <div>
          <Button variant="secondary" isLoading={discover.isPending} onClick={() => void testConnection()}>
            {t('access.idp.test')}
          </Button>
        </div>
        <DiscoveryResult discovery={discovery} />
      </div>
      <TextField label={t('access.idp.clientId')} required autoComplete="off" {...form.field('clientId')} />
      <TextField
        label={t('access.idp.clientSecret')}
        type="password"
        autoComplete="new-password"
        placeholder={provider?.hasClientSecret ? t('access.idp.leaveEmpty') : ''}
        description={secretHelp}
        disabled={form.values.removeSecret}
        {...form.field('clientSecret')}
      />
      {provider?.hasClientSecret && (
        <CheckboxField
          label={t('access.idp.removeSecret')}
          description={t('access.idp.removeSecretHint')}
          {...form.field('removeSecret')}
        />
      )}
      <TextField
        label={t('access.idp.scopes')}
        description={t('access.idp.scopesHint')}
        autoComplete="off"
        {...form.field('scopes')}
      />
      <TextField
        label={t('access.idp.groupsClaim')}
        description={t('access.idp.groupsClaimHint')}
        autoComplete="off"
        {...form.field('groupsClaim')}
      />
      <p className="text-xs text-gray-600 dark:text-gray-300">
        {beforeUri}
        <code className="font-mono">
          https://&lt;{t('access.idp.protectedHost')}&gt;{ACCESS_PATH}/callback
        </code>
        {afterUri}
      </p>
    </FormDialog>
  );
}

/** Adds a provider, or with `provider` edits it (the secret stays unless a new one is typed or it is removed). */
export function IdentityProviderFormDialog({
  provider,
  open,
  onClose,
}: {
  provider?: IdentityProvider | undefined;
  open: boolean;
  onClose: () => void;
}) {
  if (!open) return null;
  return <ProviderForm key={provider?.id ?? 'new'} provider={provider} onClose={onClose} />;
}
