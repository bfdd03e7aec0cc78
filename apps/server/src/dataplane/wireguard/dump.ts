import type { WgPeerStatus } from '../types.js';

// Parses `wg show <if> dump`: the first line is the interface (private-key public-key listen-port fwmark),
// then one tab-separated line per peer: public-key preshared-key endpoint allowed-ips latest-handshake
// transfer-rx transfer-tx persistent-keepalive. The preshared key is dropped here so it never travels further.
export function parseWgDump(text: string): WgPeerStatus[] {
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [publicKey = '', , endpoint = '(none)', allowed = '(none)', handshake = '0', rx = '0', tx = '0'] = line.split('\t');
      return {
        publicKey,
        endpoint: endpoint === '(none)' ? null : endpoint,
        allowedIps: allowed === '(none)' ? [] : allowed.split(','),
        latestHandshake: Number(handshake) || 0,
        transferRx: Number(rx) || 0,
        transferTx: Number(tx) || 0,
      };
    });
}

/** "203.0.113.5:51820" → "203.0.113.5"; "[2001:db8::1]:51820" → "2001:db8::1". */
export function hostOfEndpoint(endpoint: string | null): string | null {
  if (endpoint === null) return null;
  const bracketed = /^\[(.+)\]:\d+$/.exec(endpoint);
  if (bracketed?.[1]) return bracketed[1];
  const idx = endpoint.lastIndexOf(':');
  return idx > 0 ? endpoint.slice(0, idx) : endpoint;
}
