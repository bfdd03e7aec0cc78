import { roleLabels } from '@postern/contract';
import { useCurrentAccount } from '../queries/account';

/** "Signed in as <name> (<role>)": who the audit log will name for what is done here. */
export function SignedInAs({ className = '' }: { className?: string }) {
  const { data } = useCurrentAccount();
  if (!data) return null;
  return (
    <p
      className={`truncate text-sm text-gray-600 dark:text-gray-300 ${className}`}
      title={`Signed in with ${data.via}`}
    >
      Signed in as <span className="font-medium text-gray-900 dark:text-white">{data.username}</span> (
      {roleLabels[data.role]})
    </p>
  );
}
