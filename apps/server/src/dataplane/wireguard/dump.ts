// `wg show <if> dump` is parsed by the contract's parser, shared with the CLI (one copy of the format).
export { parseWgDump } from '@postern/contract';

/** "203.0.113.5:51820" → "203.0.113.5"; "[2001:db8::1]:51820" → "2001:db8::1". */
export function hostOfEndpoint(endpoint: string | null): string | null {
  if (endpoint === null) return null;
  const bracketed = /^\[(.+)\]:\d+$/.exec(endpoint);
  if (bracketed?.[1]) return bracketed[1];
  const idx = endpoint.lastIndexOf(':');
  return idx > 0 ? endpoint.slice(0, idx) : endpoint;
}
