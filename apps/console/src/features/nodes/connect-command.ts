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

/** The command for `token`, or null while the gateway's facts are loading. */
export function useConnectCommand(token: string, isEnabled = true): string | null {
  const { data, isPending } = useQuery({ ...systemInfoQueryOptions(), enabled: isEnabled });
  if (isPending) return null;
  return connectCommand(token, data);
}
