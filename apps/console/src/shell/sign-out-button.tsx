import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { LogoutIcon } from '../components/ui/icons';
import { Spinner } from '../components/ui/spinner';
import { t } from '../i18n/i18n';
import { logout } from '../lib/session';

/** Ends the session here and on the server (which clears its cookie); shows a spinner meanwhile. */
export function SignOutButton() {
  const [isSigningOut, setSigningOut] = useState(false);
  const queryClient = useQueryClient();

  const signOut = async () => {
    setSigningOut(true);
    await logout();
    queryClient.clear();
  };

  return (
    <button
      type="button"
      onClick={signOut}
      disabled={isSigningOut}
      aria-label={t('shell.signOut')}
      title={t('shell.signOut')}
      className="inline-flex items-center gap-2 rounded-md p-2 text-sm text-gray-500 hover:bg-gray-100 disabled:opacity-60 dark:text-gray-300 dark:hover:bg-gray-800"
    >
      {isSigningOut ? <Spinner className="size-5" label={t('shell.signingOut')} /> : <LogoutIcon className="size-5" />}
      <span className="hidden sm:inline">{t('shell.signOut')}</span>
    </button>
  );
}
