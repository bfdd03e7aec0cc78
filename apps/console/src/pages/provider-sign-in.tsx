import { firstPageRoutes } from '@postern/contract';
import { useEffect, useState } from 'react';
import { Button } from '../components/ui/button';
import { t } from '../i18n/i18n';
import { call } from '../lib/api';

// The login page's buttons for the organisation's identity providers (docs/api.md "Signing in through an identity
// provider"). Bare routes, answers read by hand: the first page carries no schema library. With no provider set up
// to sign accounts in, nothing is shown and the page is the spec's.

type Provider = { id: number; name: string };

/** The `data` of `{ data: [{ id, name }] }` (the contract's consoleProviders answer). */
const providersOf = (answer: unknown): Provider[] => {
  const list = typeof answer === 'object' && answer !== null ? (answer as { data?: unknown }).data : undefined;
  return Array.isArray(list)
    ? list.filter(
        (item): item is Provider =>
          typeof item === 'object' &&
          item !== null &&
          typeof (item as Provider).id === 'number' &&
          typeof (item as Provider).name === 'string',
      )
    : [];
};

export function ProviderSignIn({ onFailure }: { onFailure: (message: string) => void }) {
  const [providers, setProviders] = useState<Provider[]>([]);
  const [busy, setBusy] = useState<number | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    call(firstPageRoutes.consoleProviders, { signal: controller.signal }).then(
      (answer) => setProviders(providersOf(answer)),
      () => undefined, // no buttons: password sign-in still works
    );
    return () => controller.abort();
  }, []);

  if (providers.length === 0) return null;

  const start = async (provider: Provider) => {
    setBusy(provider.id);
    try {
      const answer = await call(firstPageRoutes.ssoStart, { body: { providerId: provider.id } });
      const url = typeof answer === 'object' && answer !== null && 'url' in answer ? answer.url : null;
      if (typeof url !== 'string') throw new Error('no URL');
      window.location.assign(url);
    } catch {
      setBusy(null);
      onFailure(t('login.providerUnreachable', { provider: provider.name }));
    }
  };

  return (
    <div className="flex flex-col gap-2">
      <p className="text-center text-xs text-gray-500 dark:text-gray-400">{t('login.or')}</p>
      {providers.map((provider) => (
        <Button
          key={provider.id}
          variant="secondary"
          className="w-full"
          isLoading={busy === provider.id}
          onClick={() => void start(provider)}
        >
          {t('login.withProvider', { provider: provider.name })}
        </Button>
      ))}
    </div>
  );
}
