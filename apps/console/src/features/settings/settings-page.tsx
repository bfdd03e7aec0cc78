import { operations, type TwoFactorSetup } from '@postern/contract';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { SubmitEvent, ReactNode } from 'react';
import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { CopyButton, CopyField } from '../../components/ui/copy-button';
import { TextField } from '../../components/ui/form-field';
import { t } from '../../i18n/i18n';
import { call, isApiError } from '../../lib/api';
import { showToast } from '../../lib/toast-store';
import { useIsKnownToHold } from '../../queries/account';
import { PasswordCard } from './password-card';

// Settings beyond the spec: the admin's password and two-factor sign-in. The QR code comes
// from the server as an SVG data URL, so no QR encoder is in the console's bundle; the secret and the recovery codes
// are shown once.

const twoFactorKey = ['auth', 'two-factor'] as const;

// Beyond the spec (docs/ACCESS.md): who may reach published services signs in with these; its own chunk.
const IdentityProvidersCard = lazy(() =>
  import('../access/identity-providers-card').then((module) => ({ default: module.IdentityProvidersCard })),
);
// Beyond the spec (docs/api.md "Notifications"): its own chunk too.
const NotificationsCard = lazy(() =>
  import('./notifications-card').then((module) => ({ default: module.NotificationsCard })),
);

// Certificates for real setups (docs/api.md "Certificates"): DNS providers and CAs, in their own chunks.
const DnsProvidersCard = lazy(() =>
  import('../certificates/dns-providers-card').then((module) => ({ default: module.DnsProvidersCard })),
);
const AcmeCasCard = lazy(() =>
  import('../certificates/acme-cas-card').then((module) => ({ default: module.AcmeCasCard })),
);

type Fields = Partial<Record<'password' | 'code', string | undefined>>;

/** A 422's field messages; any other failure was already reported by the API layer (toast or sign-out). */
function fieldErrorsOf(error: unknown): Fields {
  if (!isApiError(error)) return {};
  return Object.fromEntries(error.fieldErrors.map((entry) => [entry.field, entry.message]));
}

const required = (value: string): string | undefined => (value.trim() === '' ? t('field.empty') : undefined);

/**
 * Each step replaces the form that held focus: without this, focus would fall to <body>. The step's
 * first paragraph takes it, so a screen reader reads the instructions and the next Tab goes into the step.
 */
function useFocusIntro(shouldFocus: boolean) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (shouldFocus) ref.current?.focus();
  }, [shouldFocus]);
  return ref;
}

const introClass = 'text-sm text-gray-600 outline-none dark:text-gray-300';

export function SettingsPage() {
  // The gateway's settings are for the roles that may change them, as the server's policy says (the contract's role
  // table); operators and viewers get their own sign-in only, and nothing is asked for before the role is known.
  const mayChangeSettings = useIsKnownToHold('settings');
  return (
    <div className="flex flex-col gap-6">
      <h1 className="text-2xl font-bold">{t('nav.settings')}</h1>
      <PasswordCard />
      <TwoFactorCard />
      {mayChangeSettings && <GatewaySettingsCards />}
    </div>
  );
}

/** Identity providers, certificate settings and notifications: owners' and admins'. */
function GatewaySettingsCards() {
  return (
    <>
      <Suspense fallback={null}>
        <IdentityProvidersCard />
      </Suspense>
      <Suspense fallback={null}>
        <DnsProvidersCard />
      </Suspense>
      <Suspense fallback={null}>
        <AcmeCasCard />
      </Suspense>
      <Suspense fallback={null}>
        <NotificationsCard />
      </Suspense>
    </>
  );
}

function TwoFactorCard() {
  const queryClient = useQueryClient();
  const status = useQuery({
    queryKey: twoFactorKey,
    queryFn: ({ signal }) => call(operations.twoFactorStatus, { signal }),
  });
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  // The first step shown leaves focus where the page put it (the h1); steps the admin moved to take it.
  const [hasMoved, setMoved] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: twoFactorKey });

  let body: ReactNode = <p className="text-sm text-gray-500">{t('ui.loadingEllipsis')}</p>;
  if (recoveryCodes) body = <RecoveryCodes codes={recoveryCodes} onDone={() => setRecoveryCodes(null)} />;
  else if (status.data?.enabled) {
    body = (
      <DisableForm
        codesLeft={status.data.recoveryCodesLeft}
        hasFocus={hasMoved}
        onDisabled={async () => {
          setMoved(true);
          await refresh();
        }}
      />
    );
  } else if (status.data) {
    body = (
      <EnrolForm
        hasFocus={hasMoved}
        onEnabled={(codes) => {
          setMoved(true);
          setRecoveryCodes(codes);
          void refresh();
        }}
      />
    );
  }
  return (
    <Card
      title={t('settings.twoFactor.title')}
      actions={
        status.data && (
          <Badge tone={status.data.enabled ? 'green' : 'gray'}>
            {t(status.data.enabled ? 'settings.on' : 'settings.off')}
          </Badge>
        )
      }
    >
      <div className="p-4">{body}</div>
    </Card>
  );
}

function EnrolForm({ hasFocus, onEnabled }: { hasFocus: boolean; onEnabled: (codes: string[]) => void }) {
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const passwordIntroRef = useFocusIntro(hasFocus);
  const setupIntroRef = useFocusIntro(setup !== null);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<Fields>({});
  const [isBusy, setBusy] = useState(false);

  const start = async (event: SubmitEvent) => {
    event.preventDefault();
    const missing = required(password);
    setErrors({ password: missing });
    if (missing) return;
    setBusy(true);
    try {
      setSetup(await call(operations.twoFactorSetup, { body: { password } }));
      setPassword('');
    } catch (error) {
      setErrors(fieldErrorsOf(error));
    } finally {
      setBusy(false);
    }
  };

  const confirm = async (event: SubmitEvent) => {
    event.preventDefault();
    const missing = required(code);
    setErrors({ code: missing });
    if (missing) return;
    setBusy(true);
    try {
      const { recoveryCodes } = await call(operations.twoFactorEnable, { body: { code: code.trim() } });
      showToast({ message: t('settings.twoFactor.isOn'), type: 'success' });
      onEnabled(recoveryCodes);
    } catch (error) {
      setErrors(fieldErrorsOf(error));
    } finally {
      setBusy(false);
    }
  };

  if (!setup) {
    return (
      <form onSubmit={start} noValidate className="flex max-w-md flex-col gap-4">
        <p ref={passwordIntroRef} tabIndex={-1} className={introClass}>
          {t('settings.twoFactor.intro')}
        </p>
        <TextField
          label={t('login.password')}
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          error={errors.password}
          onChange={setPassword}
        />
        <div>
          <Button type="submit" isLoading={isBusy}>
            {t('settings.twoFactor.setUp')}
          </Button>
        </div>
      </form>
    );
  }
  return (
    <form onSubmit={confirm} noValidate className="flex max-w-md flex-col gap-4">
      <p ref={setupIntroRef} tabIndex={-1} className={introClass}>
        {t('settings.twoFactor.scan')}
      </p>
      <img src={setup.qrCode} alt={t('settings.twoFactor.qrCode')} className="size-48 rounded-md bg-white p-2" />
      <CopyField
        label={t('settings.twoFactor.secret')}
        copyLabel={t('settings.twoFactor.copySecret')}
        value={setup.secret}
      />
      <TextField
        label={t('settings.twoFactor.code')}
        name="code"
        autoComplete="one-time-code"
        value={code}
        error={errors.code}
        onChange={setCode}
      />
      <div>
        <Button type="submit" isLoading={isBusy}>
          {t('settings.twoFactor.turnOn')}
        </Button>
      </div>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const introRef = useFocusIntro(true);
  return (
    <div className="flex max-w-md flex-col gap-4">
      <p
        ref={introRef}
        tabIndex={-1}
        className="rounded-md bg-yellow-50 px-3 py-2 text-sm text-yellow-900 outline-none dark:bg-yellow-950 dark:text-yellow-100"
      >
        {t('settings.twoFactor.recoveryNotice')}
      </p>
      <ul aria-label={t('settings.twoFactor.recoveryCodes')} className="grid grid-cols-2 gap-2 font-mono text-sm">
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <div className="flex gap-2">
        <CopyButton text={codes.join('\n')} label={t('settings.twoFactor.copyCodes')} />
        <Button onClick={onDone}>{t('settings.twoFactor.stored')}</Button>
      </div>
    </div>
  );
}

function DisableForm({
  codesLeft,
  hasFocus,
  onDisabled,
}: {
  codesLeft: number;
  hasFocus: boolean;
  onDisabled: () => unknown;
}) {
  const introRef = useFocusIntro(hasFocus);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<Fields>({});
  const [isBusy, setBusy] = useState(false);

  const disable = async (event: SubmitEvent) => {
    event.preventDefault();
    const found = { password: required(password), code: required(code) };
    setErrors(found);
    if (found.password || found.code) return;
    setBusy(true);
    try {
      await call(operations.twoFactorDisable, { body: { password, code: code.trim() } });
      showToast({ message: t('settings.twoFactor.isOff'), type: 'success' });
      await onDisabled();
    } catch (error) {
      setErrors(fieldErrorsOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={disable} noValidate className="flex max-w-md flex-col gap-4">
      <p ref={introRef} tabIndex={-1} className={introClass}>
        {t('settings.twoFactor.enabledIntro', { count: codesLeft })}
      </p>
      <TextField
        label={t('login.password')}
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        error={errors.password}
        onChange={setPassword}
      />
      <TextField
        label={t('settings.twoFactor.codeOrRecovery')}
        name="code"
        autoComplete="one-time-code"
        value={code}
        error={errors.code}
        onChange={setCode}
      />
      <div>
        <Button type="submit" variant="danger" isLoading={isBusy}>
          {t('settings.twoFactor.turnOff')}
        </Button>
      </div>
    </form>
  );
}
