import { cidrBounds, intToIpv4, isInSubnet } from '@postern/contract';
import { allocateAddress } from '../../dataplane/wireguard/addresses.js';
import { fieldError } from '../../errors.js';

/** The requested address when it is a free host address of the VPN subnet, else the lowest free one. */
export function chooseAddress(
  vpnSubnet: string,
  used: ReadonlySet<string>,
  requested: string | null | undefined,
): string {
  if (!requested) {
    try {
      return allocateAddress(vpnSubnet, used);
    } catch (error) {
      throw fieldError('address', error instanceof Error ? error.message : 'No free address in the VPN subnet');
    }
  }
  if (!isInSubnet(requested, vpnSubnet))
    throw fieldError('address', `This address must lie inside the VPN subnet ${vpnSubnet}`);
  const [first, last] = cidrBounds(vpnSubnet);
  if (requested === intToIpv4(first) || requested === intToIpv4(last)) {
    throw fieldError('address', 'This address is reserved (network or broadcast address)');
  }
  if (used.has(requested)) throw fieldError('address', 'This address is already in use');
  return requested;
}

export { cidrsOverlap } from '@postern/contract';
