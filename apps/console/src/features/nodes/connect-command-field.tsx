import { CopyField } from '../../components/ui/copy-button';

/** The connect command with its copy button; a short note while the gateway's address is loading. */
export function ConnectCommandField({ command }: { command: string | null }) {
  if (command === null) return <p className="text-gray-600 dark:text-gray-400">Loading the gateway’s address…</p>;
  return <CopyField label="Connect command" value={command} />;
}
