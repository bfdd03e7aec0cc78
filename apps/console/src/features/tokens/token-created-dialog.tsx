import type { PersonalAccessTokenCreated } from '@postern/contract';
import { formatDate } from '@postern/contract';
import { CopyField } from '../../components/ui/copy-button';
import { InfoDialog } from '../../components/ui/dialog';
import { links } from '../../lib/links';

/** The one time a token's secret is shown (the spec's "Screens and routes"). */
export function TokenCreatedDialog({
  token,
  onClose,
}: {
  token: PersonalAccessTokenCreated | null;
  onClose: () => void;
}) {
  return (
    <InfoDialog open={token !== null} title="New Access Token Generated" onClose={onClose}>
      {token && (
        <>
          <p>Your Personal Access Token was created. Store it securely: it will not be shown again.</p>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
            <dt className="font-medium">Token Name</dt>
            <dd>{token.name}</dd>
            {token.expireAt && (
              <>
                <dt className="font-medium">Token expires</dt>
                <dd>{formatDate(token.expireAt)}</dd>
              </>
            )}
          </dl>
          <CopyField label="Token" value={token.token} />
          <p className="rounded-md bg-yellow-50 px-3 py-2 text-yellow-900 dark:bg-yellow-950 dark:text-yellow-100">
            The token is only visible once. Make sure to store it securely.
          </p>
          <p className="text-gray-600 dark:text-gray-400">
            Use it with the{' '}
            <a className="text-brand-600 underline" href={links.cliInstall} target="_blank" rel="noreferrer">
              command-line tool
            </a>
            , the{' '}
            <a className="text-brand-600 underline" href={links.nodeClientImage} target="_blank" rel="noreferrer">
              container client image
            </a>{' '}
            or the{' '}
            <a className="text-brand-600 underline" href={links.nodeHelmChart} target="_blank" rel="noreferrer">
              Kubernetes chart
            </a>
            .
          </p>
        </>
      )}
    </InfoDialog>
  );
}
