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
    ['Issuer', found.issuer],
    ['Sign-in endpoint', found.authorizationEndpoint],
    ['Token endpoint', found.tokenEndpoint],
    ['User info endpoint', found.userinfoEndpoint ?? 'None'],
    ['PKCE (S256)', found.supportsPkce ? 'Supported' : 'Not announced: sign-ins use it anyway and may fail'],
    ['Scopes offered', found.scopesSupported.length > 0 ? found.scopesSupported.join(' ') : 'Not announced'],
  ];
  return (
    <div
      role="status"
      aria-label="Test connection result"
      className="rounded-md bg-green-50 px-3 py-2 text-sm text-green-900 dark:bg-green-950 dark:text-green-100"
    >
      <p className="font-medium">The provider answered.</p>
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
    toast({ message: isEdit ? 'Identity provider updated' : 'Identity provider added', type: 'success' });
    onClose();
  });

  const testConnection = async () => {
    const checked = IdentityProviderDiscoverSchema.safeParse({ issuer: form.values.issuer });
    if (!checked.success) {
      form.touch('issuer');
      setDiscovery({ status: 'failed', message: toFieldErrors(checked.error)[0]?.message ?? 'Not an issuer URL' });
      return;
    }
    setDiscovery({ status: 'idle' });
    try {
      setDiscovery({ status: 'found', found: await discover.mutateAsync(checked.data.issuer) });
    } catch (error) {
      const message = isApiError(error)
        ? (error.fieldErrors[0]?.message ?? error.serverMessage ?? error.message)
        : 'The test could not run';
      setDiscovery({ status: 'failed', message });
    }
  };

  const secretHelp = !isEdit
    ? 'Leave empty for a public client (PKCE alone). Stored encrypted and never shown again.'
    : provider.hasClientSecret
      ? 'A secret is stored. Leave empty to keep it; it is never shown again.'
      : 'None stored (a public client). Type one to store it.';

  return (
    <FormDialog
      open
      size="medium"
      title={isEdit ? 'Edit Identity Provider' : 'Add Identity Provider'}
      onClose={onClose}
      onSubmit={onSubmit}
      isSubmitting={form.isSubmitting}
    >
      <TextField label="Name" placeholder="Google, Keycloak, Authentik…" required {...form.field('name')} />
      <div className="flex flex-col gap-2">
        <TextField
          label="Issuer URL"
          placeholder="https://accounts.google.com"
          description="The provider's OpenID Connect issuer: discovery reads <issuer>/.well-known/openid-configuration."
          required
          autoComplete="off"
          {...form.field('issuer')}
        />
        <div>
          <Button variant="secondary" isLoading={discover.isPending} onClick={() => void testConnection()}>
            Test connection
          </Button>
        </div>
        <DiscoveryResult discovery={discovery} />
      </div>
      <TextField label="Client ID" required autoComplete="off" {...form.field('clientId')} />
      <TextField
        label="Client secret"
        type="password"
        autoComplete="new-password"
        placeholder={provider?.hasClientSecret ? 'Leave empty to keep' : ''}
        description={secretHelp}
        disabled={form.values.removeSecret}
        {...form.field('clientSecret')}
      />
      {provider?.hasClientSecret && (
        <CheckboxField
          label="Remove the stored secret"
          description="The provider then treats the gateway as a public client."
          {...form.field('removeSecret')}
        />
      )}
      <TextField
        label="Scopes"
        description="Space-separated; openid is always asked for."
        autoComplete="off"
        {...form.field('scopes')}
      />
      <TextField
        label="Groups claim"
        description="The claim holding the user's groups (ID token, else user info), for allowed groups."
        autoComplete="off"
        {...form.field('groupsClaim')}
      />
      <p className="text-xs text-gray-600 dark:text-gray-300">
        Register the redirect URI{' '}
        <code className="font-mono">https://&lt;protected host&gt;{ACCESS_PATH}/callback</code> at the provider for
        every protected host.
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
