import type { SystemInfo } from './entities.js';

// The commands the console's node-ready dialog shows, one per way a node runs, kept here so that the system tests
// run exactly what an operator copies (e2e/images/install.test.ts). Multi-line, as printed and as pasted.

/** Only when the gateway's facts could not be read: the operator fills in the gateway's HTTPS address. */
export const GATEWAY_URL_PLACEHOLDER = '<GATEWAY_HTTPS_URL>';

/** The default of POSTERN_RELEASE_REGISTRY: where the project's release workflow publishes images and charts. */
export const DEFAULT_RELEASE_REGISTRY = 'ghcr.io/postern';

/** Characters a shell reads as part of a plain word; anything else is single-quoted. */
const PLAIN_WORD = /^[A-Za-z0-9._:/+=@%,-]+$/;

/** One shell word: as it is when plain, else single-quoted (a quote inside closes, escapes and reopens). */
export function shellWord(value: string): string {
  return PLAIN_WORD.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

function pinOf(info: SystemInfo | undefined): string | null {
  return info?.certificate?.selfSigned === true ? info.certificate.pin : null;
}

/**
 * The one-line install (deploy/install.sh, served by the gateway): curl fetches install.sh over a connection that
 * accepts only the gateway's certificate (its pin while self-signed; the CA check otherwise), and the line echoed
 * after it runs the install. The token reaches the script inside the pipe, never as a process's argument, so no
 * other user of the machine sees it in `ps`. `sudo` may be left out by root.
 */
export function installCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = pinOf(info);
  const curl = [
    'curl -fsS',
    ...(pin === null ? [] : [`--pinnedpubkey ${shellWord(`sha256//${pin.slice('sha256:'.length)}`)} -k`]),
    shellWord(`${url}/install.sh`),
  ].join(' ');
  // Inside the double quotes only `$`, backquote, backslash and `"` are special: none is in a URL, pin or token
  // (the gateway validates them), and each value is single-quoted again for the shell that reads the echoed line.
  const line = [
    'postern_install --url',
    `'${url}'`,
    ...(pin === null ? [] : ['--pin', `'${pin}'`]),
    '--token',
    `'${token}'`,
  ].join(' ');
  return `{ ${curl}\n  echo "${line}"\n} | sudo sh`;
}

/**
 * `postern connect`, for a machine that has the client already (console: the node's "Connect This Node"). Values
 * as they are: URL, token and pin are plain shell words, and a placeholder reads better unquoted where it is
 * replaced by hand.
 */
export function connectCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = pinOf(info);
  return `postern connect --url ${url} --token ${token}${pin === null ? '' : ` --pin ${pin}`}`;
}

/** The published node image (deploy/node.Dockerfile) as deploy/README.md runs it. */
export function dockerCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = pinOf(info);
  return [
    'docker run -d --name postern-node --restart unless-stopped',
    '  --cap-add NET_ADMIN --device /dev/net/tun',
    `  -e POSTERN_URL=${shellWord(url)}`,
    ...(pin === null ? [] : [`  -e POSTERN_PIN=${shellWord(pin)}`]),
    `  -e POSTERN_TOKEN=${shellWord(token)}`,
    `  ${shellWord(info?.nodeInstall.image ?? `${DEFAULT_RELEASE_REGISTRY}/node`)}`,
  ].join(' \\\n');
}

/** The published node chart (deploy/helm/postern-node) installed with this gateway's URL, pin and the token. */
export function helmCommand(token: string, info: SystemInfo | undefined): string {
  const url = info?.publicUrl ?? GATEWAY_URL_PLACEHOLDER;
  const pin = pinOf(info);
  const chart = info?.nodeInstall.chart ?? `oci://${DEFAULT_RELEASE_REGISTRY}/charts/postern-node`;
  const image = info?.nodeInstall.image;
  // The chart's default image is the project's; a gateway pointed at another registry (a fork's) names its own.
  const repository = image?.replace(/:[^/:]+$/, '');
  return [
    `helm install postern-node ${shellWord(chart)}${info ? ` --version ${shellWord(info.nodeInstall.chartVersion)}` : ''}`,
    `  --set gatewayUrl=${shellWord(url)}`,
    ...(pin === null ? [] : [`  --set gatewayPin=${shellWord(pin)}`]),
    `  --set token.value=${shellWord(token)}`,
    ...(repository === undefined || repository === `${DEFAULT_RELEASE_REGISTRY}/node`
      ? []
      : [`  --set image.repository=${shellWord(repository)}`]),
  ].join(' \\\n');
}
