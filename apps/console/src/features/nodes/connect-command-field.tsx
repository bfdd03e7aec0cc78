import { CopyField } from '../../components/ui/copy-button';
import { t } from '../../i18n/i18n';

/** The connect command with its copy button; a short note while the gateway's address is loading. */
export function ConnectCommandField({ command }: { command: string | null }) {
  if (command === null) return <p className="text-gray-600 dark:text-gray-400">{t('nodes.connect.loading')}</p>;
  return <CopyField label={t('nodes.connect.command')} copyLabel={t('nodes.connect.copyCommand')} value={command} />;
}
