import type { LoginRequest, LoginResponse } from '@postern/contract';
import { firstPageRoutes } from '@postern/contract';
import { useNavigate } from '@tanstack/react-router';
import type { SubmitEvent } from 'react';
import { useEffect, useState } from 'react';
import { Button } from '../components/ui/button';
import { TextField } from '../components/ui/form-field';
import { CloseIcon, ShieldIcon } from '../components/ui/icons';
import { t } from '../i18n/i18n';
import { call, isApiError } from '../lib/api';
import { clearRedirectTarget, readRedirectTarget, storeToken } from '../lib/session';
import { ProviderSignIn } from './provider-sign-in';

// The sign-in screen is the first page most visits load, so it checks its two fields by hand instead of pulling
// zod in; the server validates the same request with the contract's LoginRequestSchema.

// The texts in the active language (catalogs/en.json holds the spec's English).
export const invalidCredentials = (): string => t('login.invalidCredentials');
export const tooManyAttempts = (): string => t('login.tooManyAttempts');
export const invalidCode = (): string => t('login.invalidCode');
export const loginUnreachable = (): string => t('login.unreachable');
export const loginServerError = (status: number): string => t('login.serverError', { status });

/**
 * The alert for a failed sign-in (the spec's "Error catalogue"). Beyond the spec, a sign-in that got no answer or a
 * server error says so: 'Invalid Credentials' would send the operator looking for a password that was never checked.
 */
export function loginFailureMessage(error: unknown): string {
  if (!isApiError(error)) return invalidCredentials();
  if (error.status === 429) return tooManyAttempts();
  if (error.status === 0) return loginUnreachable();
  if (error.status >= 500) return loginServerError(error.status);
  return invalidCredentials();
}

type Errors = Partial<Record<keyof LoginRequest, string>>;

export function checkCredentials({ username, password }: LoginRequest): Errors {
  const errors: Errors = {};
  if (username.trim() === '') errors.username = t('field.empty');
  if (password === '') errors.password = t('field.empty');
  return errors;
}

/** The password step's answer when two-factor sign-in is on (docs/api.md): a challenge for the second step. */
function challengeOf(body: unknown): string | null {
  if (
    typeof body === 'object' &&
    body !== null &&
    'twoFactorRequired' in body &&
    'challenge' in body &&
    typeof body.challenge === 'string'
  ) {
    return body.challenge;
  }
  return null;
}

/** The alert for a refused code: the server says whether the challenge expired; a limited client waits. */
export function secondFactorFailureMessage(error: unknown): string {
  if (isApiError(error) && (error.status === 429 || error.status === 0 || error.status >= 500))
    return loginFailureMessage(error);
  return (isApiError(error) && error.status === 401 && error.serverMessage) || invalidCode();
}

function toLoginResponse(body: unknown): LoginResponse {
  if (
    typeof body === 'object' &&
    body !== null &&
    'token' in body &&
    'expires_in' in body &&
    typeof body.token === 'string' &&
    typeof body.expires_in === 'number'
  ) {
    return { token: body.token, expires_in: body.expires_in };
  }
  throw new Error('unexpected login answer');
}

export function LoginPage() {
  const navigate = useNavigate();
  const [credentials, setCredentials] = useState<LoginRequest>({ username: '', password: '' });
  const [errors, setErrors] = useState<Errors>({});
  const [alert, setAlert] = useState<string | null>(null);
  const [isSubmitting, setSubmitting] = useState(false);
  const [challenge, setChallenge] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | undefined>();

  const finish = async (answer: unknown) => {
    const { token, expires_in } = toLoginResponse(answer);
    storeToken(token, expires_in);
    const target = readRedirectTarget();
    clearRedirectTarget();
    await navigate({ to: target });
  };

  const verify = async (event: SubmitEvent) => {
    event.preventDefault();
    if (challenge === null) return;
    if (code.trim() === '') {
      setCodeError(t('field.empty'));
      return;
    }
    setCodeError(undefined);
    setAlert(null);
    setSubmitting(true);
    try {
      await finish(await call(firstPageRoutes.loginSecondFactor, { body: { challenge, code: code.trim() } }));
    } catch (error) {
      setAlert(secondFactorFailureMessage(error));
      setCode('');
    } finally {
      setSubmitting(false);
    }
  };
  useEffect(() => {
    document.title = t('login.documentTitle');
  }, []);

  const change = (name: keyof LoginRequest) => (value: string) => {
    const next = { ...credentials, [name]: value };
    setCredentials(next);
    setErrors((current) => ({ ...current, [name]: checkCredentials(next)[name] }));
  };
  const blur = (name: keyof LoginRequest) => () =>
    setErrors((current) => ({ ...current, [name]: checkCredentials(credentials)[name] }));

  const signIn = async (event: SubmitEvent) => {
    event.preventDefault();
    const found = checkCredentials(credentials);
    setErrors(found);
    const firstInvalid = (['username', 'password'] as const).find((name) => found[name]);
    if (firstInvalid) {
      // Focus the first field to fix rather than leave it on the button.
      (event.currentTarget as HTMLFormElement).querySelector<HTMLInputElement>(`[name="${firstInvalid}"]`)?.focus();
      return;
    }
    setAlert(null);
    setSubmitting(true);
    try {
      const body = { username: credentials.username.trim(), password: credentials.password };
      const answer = await call(firstPageRoutes.login, { body });
      const issued = challengeOf(answer);
      if (issued !== null) {
        setChallenge(issued);
        return;
      }
      await finish(answer);
    } catch (error) {
      setAlert(loginFailureMessage(error));
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <main className="flex min-h-screen items-center justify-center bg-gray-50 px-4 dark:bg-gray-950">
      <div className="w-full max-w-sm">
        <div className="mb-6 flex flex-col items-center gap-2">
          <ShieldIcon className="size-10 text-brand-600" />
          <h1 className="text-2xl font-bold">{t('login.title')}</h1>
        </div>
        {challenge !== null ? (
          <form
            onSubmit={verify}
            noValidate
            aria-label={t('login.twoFactorForm')}
            className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6 shadow-sm dark:border-gray-800 dark:bg-gray-900"
          >
            {alert && <LoginAlert text={alert} onClose={() => setAlert(null)} />}
            <TextField
              label={t('login.code')}
              name="code"
              autoComplete="one-time-code"
              inputMode="text"
              autoFocus
              value={code}
              error={codeError}
              description={t('login.codeDescription')}
              onChange={(value) => {
                setCode(value);
                setCodeError(value.trim() === '' ? t('field.empty') : undefined);
              }}
            />
            <Button type="submit" isLoading={isSubmitting} className="w-full">
              {t('login.verify')}
            </Button>
            <button
              type="button"
              className="text-sm text-brand-600 hover:underline"
              onClick={() => {
                setChallenge(null);
                setCode('');
                setAlert(null);
                setCredentials((current) => ({ ...current, password: '' }));
              }}
            >
              {t('login.back')}
            </button>
          </form>
        ) : (
          <form
            onSubmit={signIn}
            noValidate
            className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6 shadow-sm dark:border-gray-800 dark:bg-gray-900"
          >
            {alert && (
              <div
                role="alert"
                className="flex items-start gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
              >
                <p className="flex-1">{alert}</p>
                <button type="button" aria-label={t('login.closeAlert')} onClick={() => setAlert(null)}>
                  <CloseIcon className="size-4" />
                </button>
              </div>
            )}
            <TextField
              label={t('login.username')}
              name="username"
              autoComplete="username"
              autoFocus
              value={credentials.username}
              error={errors.username}
              onChange={change('username')}
              onBlur={blur('username')}
            />
            <TextField
              label={t('login.password')}
              name="password"
              type="password"
              autoComplete="current-password"
              value={credentials.password}
              error={errors.password}
              onChange={change('password')}
              onBlur={blur('password')}
            />
            <Button type="submit" isLoading={isSubmitting} className="w-full">
              {t('login.submit')}
            </Button>
            <ProviderSignIn onFailure={setAlert} />
            <p className="text-center text-xs text-gray-500 dark:text-gray-400">{t('login.terms')}</p>
          </form>
        )}
      </div>
    </main>
  );
}

function LoginAlert({ text, onClose }: { text: string; onClose: () => void }) {
  return (
    <div
      role="alert"
      className="flex items-start gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
    >
      <p className="flex-1">{text}</p>
      <button type="button" aria-label={t('login.closeAlert')} onClick={onClose}>
        <CloseIcon className="size-4" />
      </button>
    </div>
  );
}
