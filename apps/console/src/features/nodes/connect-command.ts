/** The CLI command that connects a node to this gateway (apps/cli: `postern connect --url URL --token PAT`). */
export function connectCommand(token: string, gatewayUrl: string = window.location.origin): string {
  return `postern connect --url ${gatewayUrl} --token ${token}`;
}

export const TOKEN_PLACEHOLDER = '<YOUR_TOKEN>';
