import { firstPageRoutes } from '@postern/contract';
import { Link, useNavigate } from '@tanstack/react-router';
import type { SubmitEvent } from 'react';
import { useEffect, useRef, useState } from 'react';
import { Button } from '../components/ui/button';
import { TextField } from '../components/ui/form-field';
import { ShieldIcon } from '../components/ui/icons';
import { t } from '../i18n/i18n';
import { call, isApiError } from '../lib/api';
import { clearRedirectTarget, readRedirectTarget, storeToken } from '../lib/session';
import { showToast } from '../lib/toast-store';
import { secondFactorFailureMessage } from './login-page';

// Where an identity provider sends the browser back (`/login/callback?code=…&state=…`, docs/api.md "Signing in through
// an identity provider"). The query goes to the server once (its state cookie is used up by that call, so a reload
// starts over); the answer is a session, a second factor to give, or, for a link from Settings, the identity bound.

type Step = { kind: 'working' } | { kind: 'code'; challenge: string } | { kind: 'failed'; message: string };

const field = (body: unknown, name: string): unknown =>
  typeof body === 'object' && body !== null && name in body ? (body as Record<string, unknown>)[name] : undefined;

export function LoginCallbackPage() {
  const navigate = useNavigate();
  const [step, setStep] = useState<Step>({ kind: 'working' });
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | undefined>();
  const [isBusy, setBusy] = useState(false);
  const isSent = useRef(false);

  const signedIn = async (answer: unknown): Promise<boolean> => {
    const token = field(answer, 'token');
    const expiresIn = field(answer, 'expires_in');
    if (typeof token !== 'string' || typeof expiresIn !== 'number') return false;
    storeToken(token, expiresIn);
    const target = readRedirectTarget();
    clearRedirectTarget();
    await navigate({ to: target, replace: true });
    return true;
  };

  useEffect(() => {
    document.title = t('login.callbackDocumentTitle');
    // Once per page (React may run an effect twice in development): the server accepts the callback only once.
    if (isSent.current) return;
    isSent.current = true;
    const query = window.location.search;
    call(firstPageRoutes.ssoFinish, { body: { query } })
      .then(async (answer) => {
        if (await signedIn(answer)) return;
        const challenge = field(answer, 'challenge');
        if (typeof challenge === 'string') setStep({ kind: 'code', challenge });
        else if (field(answer, 'linked') === true) {
          showToast({
            message: t('login.linked', { provider: String(field(answer, 'provider')) }),
            type: 'success',
          });
          await navigate({ to: '/settings', replace: true });
        } else setStep({ kind: 'failed', message: t('login.providerAnswerNotUnderstood') });
      })
      .catch((error: unknown) =>
        setStep({
          kind: 'failed',
          message: (isApiError(error) && error.serverMessage) || t('login.providerFailed'),
        }),
      );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per page load, on purpose (see above)
  }, []);

  const verify = async (event: SubmitEvent) => {
    event.preventDefault();
    if (step.kind !== 'code') return;
    if (code.trim() === '') {
      setCodeError(t('field.empty'));
      return;
    }
    setBusy(true);
    try {
      await signedIn(
        await call(firstPageRoutes.loginSecondFactor, { body: { challenge: step.challenge, code: code.trim() } }),
      );
    } catch (error) {
      setCodeError(secondFactorFailureMessage(error));
      setCode('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="flex min-h-screen items-center justify-center bg-gray-50 px-4 dark:bg-gray-950">
      <div className="flex w-full max-w-sm flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6 shadow-sm dark:border-gray-800 dark:bg-gray-900">
        <div className="flex items-center gap-2">
          <ShieldIcon className="size-7 text-brand-600" />
          <h1 className="text-xl font-bold">{t('login.title')}</h1>
        </div>
        {step.kind === 'working' && <p className="text-sm text-gray-600 dark:text-gray-300">{t('login.signingIn')}</p>}
        {step.kind === 'failed' && (
          <>
            <p role="alert" className="text-sm text-red-700 dark:text-red-300">
              {step.message}
            </p>
            <Link to="/login" className="text-sm font-medium text-brand-700 underline dark:text-brand-300">
              {t('login.back')}
            </Link>
          </>
        )}
        {step.kind === 'code' && (
          <form
            onSubmit={(event) => void verify(event)}
            noValidate
            aria-label={t('login.twoFactorForm')}
            className="flex flex-col gap-4"
          >
            <TextField
              label={t('login.code')}
              name="code"
              autoComplete="one-time-code"
              autoFocus
              value={code}
              error={codeError}
              description={t('login.codeDescription')}
              onChange={setCode}
            />
            <Button type="submit" isLoading={isBusy} className="w-full">
              {t('login.verify')}
            </Button>
          </form>
        )}
      </div>
    </main>
  );
}
