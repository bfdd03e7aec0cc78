// WireGuard facts shared by the gateway and the `postern` CLI. Nothing here runs a program; both sides pass text.

/**
 * A WireGuard key (private, public or preshared) as `wg` prints it: base64 of 32 bytes. The last character before
 * the padding carries 2 unused bits, which must be zero: only these 16 characters can stand there.
 */
export const WIREGUARD_KEY_PATTERN = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

export function isWireGuardKey(value: string): boolean {
  return WIREGUARD_KEY_PATTERN.test(value);
}

/** One peer line of `wg show <if> dump`, key material dropped. */
export interface WgDumpPeer {
  publicKey: string;
  /** `host:port` of the peer's last packet; null before any. */
  endpoint: string | null;
  allowedIps: string[];
  /** Unix seconds; 0 when no handshake happened yet. */
  latestHandshake: number;
  transferRx: number;
  transferTx: number;
}

/**
 * Parses `wg show <if> dump`: the first line is the interface (private-key public-key listen-port fwmark), then one
 * tab-separated line per peer: public-key preshared-key endpoint allowed-ips latest-handshake transfer-rx transfer-tx
 * persistent-keepalive. The preshared key is dropped here so it never travels further.
 */
export function parseWgDump(text: string): WgDumpPeer[] {
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [publicKey = '', , endpoint = '(none)', allowed = '(none)', handshake = '0', rx = '0', tx = '0'] =
        line.split('\t');
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
