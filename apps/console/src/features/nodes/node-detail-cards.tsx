import type { Node } from '@postern/contract';
import { formatBytes, formatDate, formatRelativeTime } from '@postern/contract';
import type { ReactNode } from 'react';
import { Button } from '../../components/ui/button';
import { Badge, Card } from '../../components/ui/card';
import { ActionMenu } from '../../components/ui/menu';
import type { MenuItem } from '../../components/ui/menu';
import { StatusDot } from '../../components/ui/status-dot';
import { TOKEN_PLACEHOLDER, useConnectCommand } from './connect-command';
import { ConnectCommandField } from './connect-command-field';

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
            {node.isGateway && <Badge tone="blue">Gateway</Badge>}
            {node.isLocal && <Badge>Local</Badge>}
          </div>
          <dl className="flex flex-wrap gap-x-6 gap-y-1 text-sm text-gray-600 dark:text-gray-300">
            {node.address && (
              <div className="flex gap-1">
                <dt className="font-medium">IP:</dt>
                <dd className="font-mono">{node.address}</dd>
              </div>
            )}
            {node.isGateway && node.gatewayNetwork && (
              <div className="flex gap-1">
                <dt className="font-medium">Subnet:</dt>
                <dd className="font-mono">
                  {(node.gatewayNetworks.length > 0 ? node.gatewayNetworks : [node.gatewayNetwork]).join(', ')}
                </dd>
              </div>
            )}
          </dl>
        </div>
        {!node.isLocal && <ActionMenu label="Node actions" items={menuItems} />}
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
    <Card title="Node Info">
      <table className="w-full divide-y divide-gray-100 text-sm dark:divide-gray-800">
        <tbody className="divide-y divide-gray-100 dark:divide-gray-800">
          <InfoRow label="Client IP">{node.clientIp ?? '-'}</InfoRow>
          <InfoRow label="Latest Handshake">{formatRelativeTime(node.latestHandshakeTimestamp)}</InfoRow>
          <InfoRow label="Transmitted">{formatBytes(node.transferTx)}</InfoRow>
          <InfoRow label="Received">{formatBytes(node.transferRx)}</InfoRow>
          <InfoRow label="Send all internet traffic through the VPN">{node.allowInternet ? 'Yes' : 'No'}</InfoRow>
        </tbody>
      </table>
    </Card>
  );
}

/** How to (re)connect the node: the CLI command, with a token the operator generates in the tokens card. */
export function NodeConnectCard({ node }: { node: Node }) {
  const command = useConnectCommand(TOKEN_PLACEHOLDER);
  return (
    <Card title="Connect This Node">
      <div className="flex flex-col gap-3 p-4 text-sm">
        <p className="text-gray-600 dark:text-gray-300">
          Run this on <strong>{node.name}</strong>, with a token from Node Access Tokens in place of {TOKEN_PLACEHOLDER}
          . The CLI stores the token in its local config file and keeps the tunnel up.
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
    <Card title="Config Status">
      <div className="flex flex-col gap-3 p-4 text-sm">
        <dl className="grid grid-cols-[auto_1fr] gap-x-6 gap-y-2">
          <dt className="font-medium text-gray-600 dark:text-gray-300">Access</dt>
          <dd>
            <Badge tone={node.enabled ? 'green' : 'red'}>{node.enabled ? 'Connected' : 'Disconnected'}</Badge>
          </dd>
          <dt className="font-medium text-gray-600 dark:text-gray-300">Tunnel</dt>
          <dd>
            {isRecentlyActive
              ? `Handshake ${formatRelativeTime(node.latestHandshakeTimestamp)}`
              : 'No recent handshake'}
          </dd>
          <dt className="font-medium text-gray-600 dark:text-gray-300">Routing</dt>
          <dd>
            {node.allowInternet ? 'All traffic through the VPN' : 'VPN traffic only'}
            {node.isGateway && node.gatewayNetwork
              ? `, routes ${(node.gatewayNetworks.length > 0 ? node.gatewayNetworks : [node.gatewayNetwork]).join(', ')}`
              : ''}
          </dd>
          {node.isGateway && (
            <>
              <dt className="font-medium text-gray-600 dark:text-gray-300">Networks set by</dt>
              <dd>{node.allowTokenNetworks ? 'You, or the node’s access tokens' : 'You only'}</dd>
            </>
          )}
          {node.applyError && (
            <>
              <dt className="font-medium text-gray-600 dark:text-gray-300">Not served</dt>
              <dd className="text-red-600 dark:text-red-400">{node.applyError}</dd>
            </>
          )}
          <dt className="font-medium text-gray-600 dark:text-gray-300">Config changed</dt>
          <dd>{formatDate(node.updated_at)}</dd>
        </dl>
        <p className="text-gray-600 dark:text-gray-300">
          {node.enabled
            ? 'The gateway accepts this node’s tunnel. After editing the node, reconnect it so it picks up the new config.'
            : 'The gateway refuses this node’s tunnel until you connect it again.'}
        </p>
        <div>
          <Button variant="secondary" onClick={onDownload}>
            Download Config
          </Button>
        </div>
      </div>
    </Card>
  );
}
