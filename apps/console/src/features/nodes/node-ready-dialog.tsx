import type { NodeCreated } from '@postern/contract';
import { useState } from 'react';
import { Button } from '../../components/ui/button';
import { CopyButton, CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { CheckIcon } from '../../components/ui/icons';
import { downloadNodeConfig } from '../../queries/nodes';
import { maskToken, useNodeCommands, type NodeCommands } from './connect-command';

type Way = 'cli' | 'wireguard' | 'docker' | 'helm';

const ways: { value: Way; label: string }[] = [
  { value: 'cli', label: 'CLI' },
  { value: 'wireguard', label: 'WireGuard' },
  { value: 'docker', label: 'Docker' },
  { value: 'helm', label: 'Helm' },
];

const hints: Record<Exclude<Way, 'wireguard'>, string> = {
  cli: 'Run this on the node to connect it:',
  docker: 'Start the node container on the machine (services in other containers share its tunnel):',
  helm: 'Install the node chart in the cluster (your containers go in extraContainers):',
};

/**
 * A command shown with its token masked, copied with the real one: the token appears on screen once, in the
 * token field below.
 */
function CommandField({ label, command, token }: { label: string; command: string; token: string }) {
  return (
    <div className="flex items-stretch gap-2">
      <input
        readOnly
        aria-label={label}
        value={command.replaceAll(token, maskToken(token))}
        onFocus={(event) => event.currentTarget.select()}
        className="min-w-0 flex-1 rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs dark:border-gray-600 dark:bg-gray-800"
      />
      <CopyButton text={command} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

function WayPanel({ way, node, commands }: { way: Way; node: NodeCreated; commands: NodeCommands | null }) {
  if (way === 'wireguard') {
    return (
      <>
        <p>
          For a machine that runs plain WireGuard (wg-quick, a router, a phone): import this configuration file. It
          needs no token.
        </p>
        <div>
          <Button
            variant="secondary"
            onClick={() =>
              void downloadNodeConfig(node.id).catch((error: unknown) => console.error('download config failed', error))
            }
          >
            Download WireGuard config
          </Button>
        </div>
      </>
    );
  }
  const label = { cli: 'Connect command', docker: 'Docker command', helm: 'Helm command' }[way];
  return (
    <>
      <p>{hints[way]}</p>
      {commands === null ? (
        <p className="text-gray-600 dark:text-gray-400">Loading the gateway’s address…</p>
      ) : (
        <CommandField label={label} command={commands[way]} token={node.token} />
      )}
      <p className="text-xs text-gray-600 dark:text-gray-400">The copy button fills in the token.</p>
    </>
  );
}

/** Shown once after a node is created: its token and the ways to run the node (console-spec §2). */
export function NodeReadyDialog({ node, onClose }: { node: NodeCreated | null; onClose: () => void }) {
  const commands = useNodeCommands(node?.token ?? '', node !== null);
  const [way, setWay] = useState<Way>('cli');
  return (
    <InfoDialog
      open={node !== null}
      title="Your Node is Ready"
      icon={<CheckIcon className="size-6 text-green-600" />}
      onClose={onClose}
    >
      {node && (
        <>
          <p>
            <strong>{node.name}</strong> was created. Choose how the node runs:
          </p>
          <div role="group" aria-label="How the node runs" className="flex flex-wrap gap-2">
            {ways.map((option) => (
              <button
                key={option.value}
                type="button"
                aria-pressed={way === option.value}
                onClick={() => setWay(option.value)}
                className={`rounded-full border px-3 py-1 text-sm ${way === option.value ? 'border-brand-600 bg-brand-600 text-white' : 'border-gray-300 bg-white text-gray-700 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-200'}`}
              >
                {option.label}
              </button>
            ))}
          </div>
          <WayPanel key={way} way={way} node={node} commands={commands} />
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
