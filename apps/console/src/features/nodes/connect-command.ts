import type { SystemInfo } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { systemInfoQueryOptions } from '../../queries/system';

export const TOKEN_PLACEHOLDER = '<YOUR_TOKEN>';
/** Only when the gateway's facts could not be read: the operator fills in the gateway's HTTPS address. */
export const GATEWAY_URL_PLACEHOLDER = '<GATEWAY_HTTPS_URL>';

/**
 * The CLI command that connects a node to this gateway (apps/cli: `postern connect --url URL --token PAT
 * [--pin PIN]`): the gateway's public URL, never the address this browser uses, and the certificate's pin while
 * it is self-signed, so the CLI trusts exactly that certificate.
 */
export function connectCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = info?.certificate?.selfSigned === true ? ` --pin ${info.certificate.pin}` : '';
  return `postern connect --url ${url} --token ${token}${pin}`;
}

/** The node image (deploy/node.Dockerfile) as `docker run` starts it (deploy/README.md). */
export function dockerCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = info?.certificate?.selfSigned === true ? ` -e POSTERN_PIN=${info.certificate.pin}` : '';
  return `docker run -d --name postern-node --restart unless-stopped --cap-add NET_ADMIN --device /dev/net/tun -e POSTERN_URL=${url} -e POSTERN_TOKEN=${token}${pin} postern/node`;
}

/** The node chart (deploy/helm/postern-node) installed with this gateway's URL, pin and the token. */
export function helmCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = info?.certificate?.selfSigned === true ? ` --set gatewayPin=${info.certificate.pin}` : '';
  return `helm install postern-node deploy/helm/postern-node --set gatewayUrl=${url} --set token.value=${token}${pin}`;
}

/**
 * What the node-ready dialog shows in place of the token: the token itself is on screen once, in its own field;
 * the copy buttons put it into the commands.
 */
export const maskToken = (token: string): string => `${token.slice(0, 5)}••••••••`;

export type NodeCommands = { cli: string; docker: string; helm: string };

/** Every way to run a new node, for `token`, or null while the gateway's facts are loading. */
export function useNodeCommands(token: string, isEnabled = true): NodeCommands | null {
  const { data, isPending } = useQuery({ ...systemInfoQueryOptions(), enabled: isEnabled });
  if (isPending) return null;
  return { cli: connectCommand(token, data), docker: dockerCommand(token, data), helm: helmCommand(token, data) };
}

/** The command for `token`, or null while the gateway's facts are loading. */
export function useConnectCommand(token: string, isEnabled = true): string | null {
  const { data, isPending } = useQuery({ ...systemInfoQueryOptions(), enabled: isEnabled });
  if (isPending) return null;
  return connectCommand(token, data);
}
