import { t, withSlot } from '../i18n/i18n';
import { useCurrentAccount } from '../queries/account';

/**
 * "Signed in as <name> (<role>)": who the audit log will name for what is done here. One line cut short in the top
 * bar; `wrap` lets it take a second line where the width is fixed (the phone sidebar), as longer languages need.
 */
export function SignedInAs({ className = '', wrap = false }: { className?: string; wrap?: boolean }) {
  const { data } = useCurrentAccount();
  if (!data) return null;
  const [before, after] = withSlot('shell.signedInAs', 'username', { role: t(`role.${data.role}`) });
  return (
    <p
      className={`${wrap ? 'break-words' : 'truncate'} text-sm text-gray-600 dark:text-gray-300 ${className}`}
      title={t('shell.signedInWith', { via: viaText(data.via) })}
    >
      {before}
      <span className="font-medium text-gray-900 dark:text-white">{data.username}</span>
      {after}
    </p>
  );
}

/**
 * How the session signed in, in the language. The server words it 'password' or 'single sign-on (<provider>)', then
 * ' + authentication code' or ' + recovery code' (docs/api.md "Accounts and roles"); anything else is shown as sent.
 */
function viaText(via: string): string {
  const match = /^(?:password|single sign-on \((.*)\))(?: \+ (authentication|recovery) code)?$/.exec(via);
  if (!match) return via;
  const [, provider, code = 'none'] = match;
  return t('shell.via', { method: provider === undefined ? 'password' : 'sso', provider: provider ?? '', code });
}
