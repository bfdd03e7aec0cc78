import { connectCommand, dockerCommand, helmCommand, installCommand, type SystemInfo } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { systemInfoQueryOptions } from '../../queries/system';

// The commands themselves are built in @postern/contract (install-commands.ts), so the system tests run exactly
// what the console prints; here they get the gateway's facts (public URL, certificate pin, published image and chart).

export { connectCommand, GATEWAY_URL_PLACEHOLDER } from '@postern/contract';
export const TOKEN_PLACEHOLDER = '<YOUR_TOKEN>';

/**
 * What the node-ready dialog shows in place of the token: the token itself is on screen once, in its own field;
 * the copy buttons put it into the commands.
 */
export const maskToken = (token: string): string => `${token.slice(0, 5)}••••••••`;

export type NodeCommands = {
  /** The one-line install (install.sh from the gateway); null when this gateway does not serve the client. */
  install: string | null;
  cli: string;
  docker: string;
  helm: string;
};

export function nodeCommands(token: string, info: SystemInfo | undefined): NodeCommands {
  return {
    install: info?.nodeInstall.script === true ? installCommand(token, info) : null,
    cli: connectCommand(token, info),
    docker: dockerCommand(token, info),
    helm: helmCommand(token, info),
  };
}

/** Every way to run a new node, for `token`, or null while the gateway's facts are loading. */
export function useNodeCommands(token: string, isEnabled = true): NodeCommands | null {
  const { data, isPending } = useQuery({ ...systemInfoQueryOptions(), enabled: isEnabled });
  if (isPending) return null;
  return nodeCommands(token, data);
}

/** The command for `token`, or null while the gateway's facts are loading. */
export function useConnectCommand(token: string, isEnabled = true): string | null {
  const { data, isPending } = useQuery({ ...systemInfoQueryOptions(), enabled: isEnabled });
  if (isPending) return null;
  return connectCommand(token, data);
}
