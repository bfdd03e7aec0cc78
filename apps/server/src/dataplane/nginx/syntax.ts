// Small helpers that keep every value written into nginx config inside an allow-list. Values are quoted
// with double quotes; the allow-lists exclude `"`, `\`, `$`, `;`, braces, whitespace and newlines, so a
// quoted value can neither end its string nor reference a variable.

const SAFE_VALUE_RE = /^[A-Za-z0-9._~:/@+=,-]+$/;
const FILE_PATH_RE = /^\/[A-Za-z0-9._/-]+$/;

/** Quotes a literal value for nginx after checking it against the allow-list. */
export function quote(value: string): string {
  if (!SAFE_VALUE_RE.test(value)) throw new Error(`refusing to write ${JSON.stringify(value)} into nginx config`);
  return `"${value}"`;
}

/** An absolute path under our own data dir (no `..`, no spaces, nothing nginx would interpret). */
export function assertFilePath(path: string): string {
  if (!FILE_PATH_RE.test(path) || path.split('/').includes('..'))
    throw new Error(`refusing file path ${JSON.stringify(path)} in nginx config`);
  return path;
}

export function quotePath(path: string): string {
  return `"${assertFilePath(path)}"`;
}

export function indent(lines: string[], depth = 1): string[] {
  const pad = '    '.repeat(depth);
  return lines.map((line) => (line === '' ? '' : `${pad}${line}`));
}

export function block(header: string, body: string[]): string[] {
  return [`${header} {`, ...indent(body), '}'];
}

/** `allow`/`deny` lines: blocked addresses first, then, when an allow-list exists, only those. */
export function renderAccessRules(
  allowed: string[],
  blocked: string[],
  assertIp: (ip: string, field: string) => string,
): string[] {
  return [
    ...blocked.map((ip) => `deny ${assertIp(ip, 'blocked IP')};`),
    ...allowed.map((ip) => `allow ${assertIp(ip, 'allowed IP')};`),
    ...(allowed.length > 0 ? ['deny all;'] : []),
  ];
}

export function renderListen(address: string | undefined, port: number, flags: string[]): string {
  return `listen ${address === undefined ? '' : `${address}:`}${port}${flags.map((f) => ` ${f}`).join('')};`;
}
