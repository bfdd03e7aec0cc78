import type { NodeCreated } from '@postern/contract';
import { useEffect, useState } from 'react';
import { Button } from '../../components/ui/button';
import { CopyButton, CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { CheckIcon } from '../../components/ui/icons';
import { downloadNodeConfig, fetchNodeConfigText } from '../../queries/nodes';
import { maskToken, useNodeCommands, type NodeCommands } from './connect-command';
import { t, type MessageId } from '../../i18n/i18n';
import { withElements } from './texts';

type Way = 'cli' | 'wireguard' | 'docker' | 'helm';

const ways: { value: Way; label: string }[] = [
  { value: 'cli', label: 'CLI' },
  { value: 'wireguard', label: 'WireGuard' },
  { value: 'docker', label: 'Docker' },
  { value: 'helm', label: 'Helm' },
];

// Ids, not texts: a change of language renders again and reads them anew (the console's README, Languages).
const commandTexts: Record<'docker' | 'helm', { hint: MessageId; label: MessageId; copy: MessageId }> = {
  docker: { hint: 'nodes.ready.dockerHint', label: 'nodes.ready.dockerCommand', copy: 'nodes.ready.copyDocker' },
  helm: { hint: 'nodes.ready.helmHint', label: 'nodes.ready.helmCommand', copy: 'nodes.ready.copyHelm' },
};

/**
 * A command shown with its token masked, copied with the real one: the token appears on screen once, in the
 * token field below. Multi-line commands keep their lines (as pasted into a shell) and scroll sideways. A command is
 * the same in every language (`translate="no"`).
 */
function CommandField({
  label,
  copyLabel,
  command,
  token,
}: {
  label: string;
  copyLabel: string;
  command: string;
  token: string;
}) {
  const shown = command.replaceAll(token, maskToken(token));
  const lines = shown.split('\n').length;
  return (
    <div className={`flex gap-2 ${lines === 1 ? 'items-stretch' : 'items-start'}`}>
      {lines === 1 ? (
        <input
          readOnly
          aria-label={label}
          value={shown}
          translate="no"
          onFocus={(event) => event.currentTarget.select()}
          className="min-w-0 flex-1 rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs dark:border-gray-600 dark:bg-gray-800"
        />
      ) : (
        <textarea
          readOnly
          aria-label={label}
          value={shown}
          translate="no"
          rows={lines}
          wrap="off"
          spellCheck={false}
          onFocus={(event) => event.currentTarget.select()}
          className="min-w-0 flex-1 resize-none overflow-x-auto rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs leading-5 dark:border-gray-600 dark:bg-gray-800"
        />
      )}
      <CopyButton text={command} label={copyLabel} />
    </div>
  );
}

const ConnectField = ({ command, token }: { command: string; token: string }) => (
  <CommandField
    label={t('nodes.connect.command')}
    copyLabel={t('nodes.connect.copyCommand')}
    command={command}
    token={token}
  />
);

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
  if (state === null) return <p className="text-gray-600 dark:text-gray-400">{t('nodes.ready.qrLoading')}</p>;
  if ('error' in state)
    return <p className="text-red-700 dark:text-red-400">{t('nodes.ready.qrError', { error: state.error })}</p>;
  return (
    <img
      src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(state.svg)}`}
      alt={t('nodes.ready.qrAlt')}
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
          {withElements('nodes.ready.noClient', {
            script: <code>scripts/build-node-client.sh</code>,
            client: <code>postern</code>,
          })}
        </p>
        <ConnectField command={commands.cli} token={token} />
      </>
    );
  }
  return (
    <>
      <p>
        {withElements('nodes.ready.cli', {
          root: <code>root</code>,
          sudo: <code>sudo</code>,
          client: <code>postern</code>,
          service: <code>postern-node</code>,
          uninstall: <code>postern uninstall</code>,
        })}
      </p>
      <CommandField
        label={t('nodes.ready.installCommand')}
        copyLabel={t('nodes.ready.copyInstall')}
        command={commands.install}
        token={token}
      />
      <p className="text-gray-600 dark:text-gray-400">{t('nodes.ready.hasClient')}</p>
      <ConnectField command={commands.cli} token={token} />
    </>
  );
}

function WayPanel({ way, node, commands }: { way: Way; node: NodeCreated; commands: NodeCommands | null }) {
  if (way === 'wireguard') {
    return (
      <>
        <p>{withElements('nodes.ready.wireguard', { tool: <code>wg-quick</code> })}</p>
        <WireGuardQrCode nodeId={node.id} />
        <div>
          <Button
            variant="secondary"
            onClick={() =>
              void downloadNodeConfig(node.id).catch((error: unknown) => console.error('download config failed', error))
            }
          >
            {t('nodes.ready.downloadWireGuard')}
          </Button>
        </div>
      </>
    );
  }
  if (commands === null) return <p className="text-gray-600 dark:text-gray-400">{t('nodes.connect.loading')}</p>;
  return (
    <>
      {way === 'cli' ? (
        <CliPanel commands={commands} token={node.token} />
      ) : (
        <>
          <p>{withElements(commandTexts[way].hint, { key: <code>extraContainers</code> })}</p>
          <CommandField
            label={t(commandTexts[way].label)}
            copyLabel={t(commandTexts[way].copy)}
            command={commands[way]}
            token={node.token}
          />
        </>
      )}
      <p className="text-xs text-gray-600 dark:text-gray-400">{t('nodes.ready.copyFills')}</p>
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
      title={t('nodes.ready.title')}
      icon={<CheckIcon className="size-6 text-green-600" />}
      size="large"
      onClose={onClose}
    >
      {node && (
        <>
          <p>{withElements('nodes.ready.created', { name: <strong>{node.name}</strong> })}</p>
          <div role="group" aria-label={t('nodes.ready.ways')} className="flex flex-wrap gap-2">
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
          <p>{t('nodes.ready.tokenOnce')}</p>
          <CopyField label={t('nodes.ready.token')} copyLabel={t('nodes.ready.copyToken')} value={node.token} />
          <p className="text-gray-600 dark:text-gray-400">{t('nodes.ready.afterConnect')}</p>
        </>
      )}
    </InfoDialog>
  );
}
