import type { Node } from '@postern/contract';
import { formatBytes, formatDate, formatRelativeTime } from '../../i18n/format';
import { t } from '../../i18n/i18n';
import type { ReactNode } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { ActionMenu } from '../../components/ui/menu';
import type { MenuItem } from '../../components/ui/menu';
import { StatusDot } from '../../components/ui/status-dot';
import { TOKEN_PLACEHOLDER, useConnectCommand } from './connect-command';
import { ConnectCommandField } from './connect-command-field';
import { withElements } from './texts';

/**
 * Name, Gateway badge, IP and Subnet; status and actions only for non-local nodes (the spec's "Screens and routes").
 */
export function NodeHeaderCard({ node, menuItems }: { node: Node; menuItems: MenuItem[] }) {
  return (
    <Card>
      <div className="flex flex-wrap items-start justify-between gap-4 p-5">
        <div className="flex flex-col gap-2">
          <div className="flex items-center gap-3">
            {!node.isLocal && <StatusDot status={node.status} />}
            <h1 className="text-2xl font-bold">{node.name}</h1>
            {node.isGateway && <Badge tone="blue">{t('nodes.type.gateway')}</Badge>}
            {node.isLocal && <Badge>{t('nodes.type.local')}</Badge>}
          </div>
          <dl className="flex flex-wrap gap-x-6 gap-y-1 text-sm text-gray-600 dark:text-gray-300">
            {node.address && (
              <div className="flex gap-1">
                <dt className="font-medium">{t('nodes.detail.ip')}</dt>
                <dd className="font-mono">{node.address}</dd>
              </div>
            )}
            {node.isGateway && node.gatewayNetwork && (
              <div className="flex gap-1">
                <dt className="font-medium">{t('nodes.detail.subnet')}</dt>
                <dd className="font-mono">
                  {(node.gatewayNetworks.length > 0 ? node.gatewayNetworks : [node.gatewayNetwork]).join(', ')}
                </dd>
              </div>
            )}
          </dl>
        </div>
        {!node.isLocal && <ActionMenu label={t('nodes.detail.actions')} items={menuItems} />}
      </div>
    </Card>
  );
}

function InfoRow({ label, children }: { label: string; children: ReactNode }) {
  return (
    <tr>
      <th scope="row" className="w-1/2 px-4 py-2.5 text-left font-medium text-gray-600 dark:text-gray-300">
        {label}
      </th>
      <td className="px-4 py-2.5">{children}</td>
    </tr>
  );
}

export function NodeInfoTable({ node }: { node: Node }) {
  return (
    <Card title={t('nodes.info.title')}>
      <table className="w-full divide-y divide-gray-100 text-sm dark:divide-gray-800">
        <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
          <InfoRow label={t('nodes.info.clientIp')}>{node.clientIp ?? '-'}</InfoRow>
          <InfoRow label={t('nodes.column.handshake')}>{formatRelativeTime(node.latestHandshakeTimestamp)}</InfoRow>
          <InfoRow label={t('nodes.info.transmitted')}>{formatBytes(node.transferTx)}</InfoRow>
          <InfoRow label={t('nodes.info.received')}>{formatBytes(node.transferRx)}</InfoRow>
          <InfoRow label={t('nodes.allowInternet')}>
            {node.allowInternet ? t('nodes.info.yes') : t('nodes.info.no')}
          </InfoRow>
        </tbody>
      </table>
    </Card>
  );
}

/** How to (re)connect the node: the CLI command, with a token the operator generates in the tokens card. */
export function NodeConnectCard({ node }: { node: Node }) {
  const command = useConnectCommand(TOKEN_PLACEHOLDER);
  return (
    <Card title={t('nodes.connect.title')}>
      <div className="flex flex-col gap-3 p-4 text-sm">
        <p className="text-gray-600 dark:text-gray-300">
          {withElements(
            'nodes.connect.text',
            { name: <strong>{node.name}</strong> },
            { placeholder: TOKEN_PLACEHOLDER },
          )}
        </p>
        <ConnectCommandField command={command} />
      </div>
    </Card>
  );
}

/** What the gateway holds for this node: whether its peer is active, and when its config last changed. */
export function NodeConfigStatusCard({ node, onDownload }: { node: Node; onDownload: () => void }) {
  const isRecentlyActive = node.status !== 'offline';
  return (
    <Card title={t('nodes.config.title')}>
      <div className="flex flex-col gap-3 p-4 text-sm">
        <dl className="grid grid-cols-[auto_1fr] gap-x-6 gap-y-2">
          <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.access')}</dt>
          <dd>
            <Badge tone={node.enabled ? 'green' : 'red'}>
              {node.enabled ? t('nodes.config.connected') : t('nodes.config.disconnected')}
            </Badge>
          </dd>
          <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.tunnel')}</dt>
          <dd>
            {isRecentlyActive
              ? t('nodes.config.handshake', { time: formatRelativeTime(node.latestHandshakeTimestamp) })
              : t('nodes.config.noHandshake')}
          </dd>
          <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.routing')}</dt>
          <dd>
            {node.isGateway && node.gatewayNetwork
              ? t(node.allowInternet ? 'nodes.config.allTrafficRoutes' : 'nodes.config.vpnOnlyRoutes', {
                  networks: (node.gatewayNetworks.length > 0 ? node.gatewayNetworks : [node.gatewayNetwork]).join(', '),
                })
              : t(node.allowInternet ? 'nodes.config.allTraffic' : 'nodes.config.vpnOnly')}
          </dd>
          {node.isGateway && (
            <>
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.networksBy')}</dt>
              <dd>{node.allowTokenNetworks ? t('nodes.config.networksByTokens') : t('nodes.config.networksByYou')}</dd>
            </>
          )}
          {node.applyError && (
            <>
              <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.notServed')}</dt>
              <dd className="text-red-600 dark:text-red-400">{node.applyError}</dd>
            </>
          )}
          <dt className="font-medium text-gray-600 dark:text-gray-300">{t('nodes.config.changed')}</dt>
          <dd>{formatDate(node.updated_at)}</dd>
        </dl>
        <p className="text-gray-600 dark:text-gray-300">
          {node.enabled ? t('nodes.config.accepted') : t('nodes.config.refused')}
        </p>
        <div>
          <Button variant="secondary" onClick={onDownload}>
            {t('nodes.downloadConfig')}
          </Button>
        </div>
      </div>
    </Card>
  );
}
