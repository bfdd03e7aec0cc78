// `wg show IF dump`: the interface line (private key, public key, port, fwmark), then one tab-separated line per
// peer: public key, preshared key, endpoint, allowed IPs, latest handshake (unix s), rx, tx, keepalive.
// Key material is dropped here so it cannot reach any output.

export interface PeerState {
  publicKey: string;
  endpoint: string | null;
  /** Unix seconds; 0 when no handshake happened yet. */
  latestHandshake: number;
  transferRx: number;
  transferTx: number;
}

export function parsePeerStates(dump: string): PeerState[] {
  return dump
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [publicKey = '', , endpoint = '(none)', , handshake = '0', rx = '0', tx = '0'] = line.split('\t');
      return {
        publicKey,
        endpoint: endpoint === '(none)' ? null : endpoint,
        latestHandshake: Number(handshake) || 0,
        transferRx: Number(rx) || 0,
        transferTx: Number(tx) || 0,
      };
    });
}
