import type { NodeCreated } from '@postern/contract';
import { useEffect, useState } from 'react';
import { Button } from '../../components/ui/button';
import { CopyButton, CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { CheckIcon } from '../../components/ui/icons';
import { downloadNodeConfig, fetchNodeConfigText } from '../../queries/nodes';
import { maskToken, useNodeCommands, type NodeCommands } from './connect-command';

type Way = 'cli' | 'wireguard' | 'docker' | 'helm';

const ways: { value: Way; label: string }[] = [
  { value: 'cli', label: 'CLI' },
  { value: 'wireguard', label: 'WireGuard' },
  { value: 'docker', label: 'Docker' },
  { value: 'helm', label: 'Helm' },
];

const hints: Record<'docker' | 'helm', string> = {
  docker: 'Start the node container on the machine (services in other containers share its tunnel):',
  helm: 'Install the node chart in the cluster (your containers go in extraContainers):',
};

/**
 * A command shown with its token masked, copied with the real one: the token appears on screen once, in the
 * token field below. Multi-line commands keep their lines (as pasted into a shell) and scroll sideways.
 */
function CommandField({ label, command, token }: { label: string; command: string; token: string }) {
  const shown = command.replaceAll(token, maskToken(token));
  const lines = shown.split('\n').length;
  return (
    <div className={`flex gap-2 ${lines === 1 ? 'items-stretch' : 'items-start'}`}>
      {lines === 1 ? (
        <input
          readOnly
          aria-label={label}
          value={shown}
          onFocus={(event) => event.currentTarget.select()}
          className="min-w-0 flex-1 rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs dark:border-gray-600 dark:bg-gray-800"
        />
      ) : (
        <textarea
          readOnly
          aria-label={label}
          value={shown}
          rows={lines}
          wrap="off"
          spellCheck={false}
          onFocus={(event) => event.currentTarget.select()}
          className="min-w-0 flex-1 resize-none overflow-x-auto rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs leading-5 dark:border-gray-600 dark:bg-gray-800"
        />
      )}
      <CopyButton text={command} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

/**
 * The node's WireGuard config as a QR code, for phones and routers that scan one (the WireGuard apps do). The
 * QR library is loaded only here, so the console's first load stays small.
 */
function WireGuardQrCode({ nodeId }: { nodeId: number }) {
  const [state, setState] = useState<{ svg: string } | { error: string } | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    void (async () => {
      try {
        const [config, { default: QRCode }] = await Promise.all([
          fetchNodeConfigText(nodeId, abort.signal),
          import('qrcode'),
        ]);
        const svg = await QRCode.toString(config, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
        if (!abort.signal.aborted) setState({ svg });
      } catch (error) {
        if (!abort.signal.aborted) setState({ error: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => abort.abort();
  }, [nodeId]);
  if (state === null) return <p className="text-gray-600 dark:text-gray-400">Making the QR code…</p>;
  if ('error' in state)
    return <p className="text-red-700 dark:text-red-400">The QR code could not be made: {state.error}</p>;
  return (
    <img
      src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(state.svg)}`}
      alt="QR code of this node's WireGuard configuration"
      // White behind the code in both themes: scanners need the contrast.
      className="size-56 self-center rounded-md border border-gray-200 bg-white p-1 dark:border-gray-700"
    />
  );
}

function CliPanel({ commands, token }: { commands: NodeCommands; token: string }) {
  if (commands.install === null) {
    return (
      <>
        <p>
          This gateway does not serve the node client (it was built without <code>scripts/build-node-client.sh</code>
          ). On a node that has <code>postern</code>, run:
        </p>
        <CommandField label="Connect command" command={commands.cli} token={token} />
      </>
    );
  }
  return (
    <>
      <p>
        Run this on the node (Debian, Ubuntu or Raspberry Pi OS; amd64 or arm64) as root or a user who may use sudo. It
        installs the <code>postern</code> client and WireGuard, connects, and keeps the node connected across reboots
        (service <code>postern-node</code>); <code>postern uninstall</code> removes it all.
      </p>
      <CommandField label="Install command" command={commands.install} token={token} />
      <p className="text-gray-600 dark:text-gray-400">On a node that already has postern:</p>
      <CommandField label="Connect command" command={commands.cli} token={token} />
    </>
  );
}

function WayPanel({ way, node, commands }: { way: Way; node: NodeCreated; commands: NodeCommands | null }) {
  if (way === 'wireguard') {
    return (
      <>
        <p>
          For a machine that runs plain WireGuard (wg-quick, a router, a phone): scan this QR code in the WireGuard app,
          or import the configuration file. It needs no token.
        </p>
        <WireGuardQrCode nodeId={node.id} />
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
  if (commands === null) return <p className="text-gray-600 dark:text-gray-400">Loading the gateway’s address…</p>;
  return (
    <>
      {way === 'cli' ? (
        <CliPanel commands={commands} token={node.token} />
      ) : (
        <>
          <p>{hints[way]}</p>
          <CommandField
            label={way === 'docker' ? 'Docker command' : 'Helm command'}
            command={commands[way]}
            token={node.token}
          />
        </>
      )}
      <p className="text-xs text-gray-600 dark:text-gray-400">The copy button fills in the token.</p>
    </>
  );
}

/** Shown once after a node is created: its token and the ways to run the node (the spec's "Screens and routes"). */
export function NodeReadyDialog({ node, onClose }: { node: NodeCreated | null; onClose: () => void }) {
  const commands = useNodeCommands(node?.token ?? '', node !== null);
  const [way, setWay] = useState<Way>('cli');
  return (
    <InfoDialog
      open={node !== null}
      title="Your Node is Ready"
      icon={<CheckIcon className="size-6 text-green-600" />}
      size="large"
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
