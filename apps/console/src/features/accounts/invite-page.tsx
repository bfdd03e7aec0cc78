import { operations, type InviteInfo } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import type { SubmitEvent } from 'react';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { TextField } from '../../components/ui/form-field';
import { ShieldIcon } from '../../components/ui/icons';
import { t, withSlot } from '../../i18n/i18n';
import { call, isApiError } from '../../lib/api';
import { storeToken } from '../../lib/session';

// An invite link's page (docs/api.md "Accounts and roles"): `/invite#<token>`. The token rides in the fragment, so it
// reaches neither a server log nor a Referer header; it is sent only in the bodies of the two calls. The invitee
// sets a password, is signed in, and lands on Settings, where two-factor sign-in can be set up.

const tokenOfLocation = (): string => decodeURIComponent(window.location.hash.replace(/^#/, ''));

type Loaded = { state: 'loading' } | { state: 'invalid'; message: string } | { state: 'ready'; info: InviteInfo };

const messageOf = (error: unknown): string =>
  isApiError(error) && error.serverMessage ? error.serverMessage : t('accounts.join.checkFailed');

export function InvitePage() {
  const [token] = useState(tokenOfLocation);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<{ password?: string | undefined; repeat?: string | undefined }>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [isBusy, setBusy] = useState(false);
  const navigate = useNavigate();

  // A 400 of an unknown, used or expired link is an answer to show, not a failure to retry.
  const info = useQuery({
    queryKey: ['invite', token],
    queryFn: ({ signal }) => call(operations.inviteInfo, { body: { token }, signal }),
    enabled: token !== '',
    retry: false,
    staleTime: Infinity,
  });
  let loaded: Loaded = { state: 'loading' };
  if (token === '') loaded = { state: 'invalid', message: t('accounts.join.wholeLink') };
  else if (info.isError) loaded = { state: 'invalid', message: messageOf(info.error) };
  else if (info.data) loaded = { state: 'ready', info: info.data };

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (loaded.state !== 'ready') return;
    const found = {
      password: password === '' ? t('accounts.join.required') : undefined,
      repeat: repeat !== password ? t('accounts.join.differ') : undefined,
    };
    setErrors(found);
    if (found.password || found.repeat) return;
    setBusy(true);
    setFailure(null);
    try {
      const { username } = await call(operations.acceptInvite, { body: { token, password } });
      const session = await call(operations.login, { body: { username, password } });
      // A new account has no second factor yet: the answer is the session.
      if ('token' in session) {
        storeToken(session.token, session.expires_in);
        await navigate({ to: '/settings' });
      } else await navigate({ to: '/login' });
    } catch (error) {
      if (isApiError(error) && error.status === 422)
        setErrors(Object.fromEntries(error.fieldErrors.map((entry) => [entry.field, entry.message])));
      else setFailure(messageOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="flex min-h-screen items-center justify-center bg-gray-50 px-4 dark:bg-gray-950">
      <div className="w-full max-w-sm rounded-lg border border-gray-200 bg-white p-6 shadow-sm dark:border-gray-800 dark:bg-gray-900">
        <div className="mb-4 flex items-center gap-2">
          <ShieldIcon className="size-7 text-brand-600" />
          <h1 className="text-xl font-bold">{t('accounts.join.title')}</h1>
        </div>
        {loaded.state === 'loading' && (
          <p className="text-sm text-gray-600 dark:text-gray-300">{t('accounts.join.checking')}</p>
        )}
        {loaded.state === 'invalid' && (
          <div className="flex flex-col gap-4">
            <p role="alert" className="text-sm text-red-700 dark:text-red-300">
              {loaded.message}
            </p>
            <Link to="/login" className="text-sm font-medium text-brand-700 underline dark:text-brand-300">
              {t('accounts.join.toSignIn')}
            </Link>
          </div>
        )}
        {loaded.state === 'ready' && (
          <form onSubmit={(event) => void submit(event)} noValidate className="flex flex-col gap-4">
            <InvitedAs username={loaded.info.username} role={t(`role.${loaded.info.role}`)} />
            <input type="hidden" name="username" autoComplete="username" value={loaded.info.username} />
            <TextField
              label={t('login.password')}
              name="password"
              type="password"
              autoComplete="new-password"
              required
              description={t('settings.password.minLength')}
              value={password}
              error={errors.password}
              onChange={setPassword}
            />
            <TextField
              label={t('accounts.join.repeat')}
              name="repeat"
              type="password"
              autoComplete="new-password"
              required
              value={repeat}
              error={errors.repeat}
              onChange={setRepeat}
            />
            {failure && (
              <p role="alert" className="text-sm text-red-700 dark:text-red-300">
                {failure}
              </p>
            )}
            <Button type="submit" isLoading={isBusy}>
              {t('accounts.join.submit')}
            </Button>
          </form>
        )}
      </div>
    </main>
  );
}

/** Who the invite is for, the name in bold where the language puts it. */
function InvitedAs({ username, role }: { username: string; role: string }) {
  const [before, after] = withSlot('accounts.join.invited', 'username', { role });
  return (
    <p className="text-sm text-gray-600 dark:text-gray-300">
      {before}
      <strong className="text-gray-900 dark:text-white">{username}</strong>
      {after}
    </p>
  );
}
