import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { LogoutIcon } from '../components/ui/icons';
import { Spinner } from '../components/ui/spinner';
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
      aria-label="Sign out"
      title="Sign out"
      className="inline-flex items-center gap-2 rounded-md p-2 text-sm text-gray-500 hover:bg-gray-100 disabled:opacity-60 dark:text-gray-300 dark:hover:bg-gray-800"
    >
      {isSigningOut ? <Spinner className="size-5" label="Signing out" /> : <LogoutIcon className="size-5" />}
      <span className="hidden sm:inline">Sign out</span>
    </button>
  );
}
