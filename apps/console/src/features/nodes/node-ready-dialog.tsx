import type { NodeCreated } from '@postern/contract';
import { CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { CheckIcon } from '../../components/ui/icons';
import { ConnectCommandField } from './connect-command-field';
import { useConnectCommand } from './connect-command';

/** Shown once after a node is created: its token and the command to connect it (console-spec §2). */
export function NodeReadyDialog({ node, onClose }: { node: NodeCreated | null; onClose(): void }) {
  const command = useConnectCommand(node?.token ?? '', node !== null);
  return (
    <InfoDialog open={node !== null} title="Your Node is Ready" icon={<CheckIcon className="size-6 text-green-600" />} onClose={onClose}>
      {node && (
        <>
          <p>
            <strong>{node.name}</strong> was created. Run this command on the node to connect it:
          </p>
          <ConnectCommandField command={command} />
          <p>Its access token is shown only this once:</p>
          <CopyField label="Token" value={node.token} />
          <p className="text-gray-600 dark:text-gray-400">
            After the connect command the token is stored in a local config file on the node. If you lose it, you must
            generate a new one from the node's access tokens.
          </p>
        </>
      )}
    </InfoDialog>
  );
}
