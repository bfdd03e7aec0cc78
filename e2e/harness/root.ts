import { existsSync } from 'node:fs';

// Whether this process may create network namespaces and TUN devices. System tests skipIf(!canUseNetns).

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

export const canUseNetns = isRoot && existsSync('/dev/net/tun') && existsSync('/usr/bin/wireguard-go');
