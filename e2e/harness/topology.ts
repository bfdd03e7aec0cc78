import { claimFreeRange } from './claims.js';
import { run } from './exec.js';
import type { Lab } from './lab.js';

// The system-test world, all inside the lab's namespaces:
//
//   client ──┐                                  ┌── node1 (WireGuard from the API's config, backends)
//            ├── internet (bridge, 10.213.B.0/24) ┼── node2 ...
//   gateway ─┘                                  └── ...
//      └── mgmt veth to the test process (10.213.B+2.0/30): the only link into the namespace the tests run in,
//          used to reach the API. Nothing else leaves the lab.
//
// B is a random multiple of 4 not already routed here nor claimed by another test process (harness/claims.ts), so
// parallel lanes, runs and other engineers' labs do not collide.

export interface Internet {
  ns: string;
  /** 10.213.B.<index> */
  ip(index: number): string;
  /** Connects `ns` to the internet with addresses .index (+ extra indexes); returns the first address. */
  attach(ns: string, role: string, indexes: number[]): Promise<string>;
}

export interface SystemTopology {
  internet: Internet;
  gatewayNs: string;
  /** Gateway's public address: what nodes dial and clients connect to. */
  gatewayPublicIp: string;
  /** Gateway's address on the management link: where the tests reach the API. */
  gatewayMgmtIp: string;
  clientNs: string;
  /** The client's source addresses: three of them, so ACL tests can come from allowed, other and blocked IPs. */
  clientIps: [string, string, string];
  /** 10.213.B+1.0/24: the LAN a gateway node routes for (see addLan). */
  lanPrefix: string;
  /** A new namespace on the internet at 10.213.B.<index>. */
  addHost(role: string, index: number): Promise<{ ns: string; publicIp: string }>;
  /**
   * Another gateway host, as the first one: a namespace on the internet at 10.213.B.<index> that forwards, with a
   * management link of its own (the next /30 of 10.213.B+2.0/24; `role`: at most 6 characters).
   */
  addGateway(role: string, index: number): Promise<GatewayHost>;
}

export interface GatewayHost {
  ns: string;
  publicIp: string;
  mgmtIp: string;
}

/** A 10.213.x.0/22 block nothing routes yet and no other test process claimed; released with the lab. */
async function pickFreeBlock(lab: Lab): Promise<number> {
  const claim = await claimFreeRange(
    '10.213',
    () => String(4 * Math.floor(Math.random() * 62) + 4),
    (routes, block) => [0, 1, 2].some((offset) => routes.includes(`10.213.${String(Number(block) + offset)}.`)),
  );
  lab.beforeRemove(claim.release);
  return Number(claim.value);
}

async function createInternet(lab: Lab, block: number): Promise<Internet> {
  const ns = await lab.createNamespace('net');
  await run('ip', ['-n', ns, 'link', 'add', 'br0', 'type', 'bridge']);
  await run('ip', ['-n', ns, 'link', 'set', 'br0', 'up']);
  const ip = (index: number): string => `10.213.${block}.${index}`;
  return {
    ns,
    ip,
    async attach(hostNs, role, indexes) {
      const port = `p-${role}`.slice(0, 15);
      await lab.createVeth({ ns: hostNs, ifname: 'inet0' }, { ns, ifname: port });
      await run('ip', ['-n', ns, 'link', 'set', port, 'master', 'br0']);
      for (const index of indexes) await run('ip', ['-n', hostNs, 'addr', 'add', `${ip(index)}/24`, 'dev', 'inet0']);
      return ip(indexes[0] ?? 0);
    },
  };
}

export async function createSystemTopology(lab: Lab): Promise<SystemTopology> {
  const block = await pickFreeBlock(lab);
  const internet = await createInternet(lab, block);
  let mgmtLinks = 0;
  const addGateway = async (role: string, index: number): Promise<GatewayHost> => {
    const ns = await lab.createNamespace(role);
    const publicIp = await internet.attach(ns, role, [index]);
    // Real gateway hosts often forward packets (Docker turns it on): node isolation must not rely on it being off.
    await lab.enableForwarding(ns);
    const link = 4 * mgmtLinks++;
    const at = (offset: number): string => `10.213.${block + 2}.${link + offset}`;
    await lab.createVeth(
      // The first gateway's link keeps its historical name.
      { ifname: lab.ifName(role === 'gw' ? 'm' : `m${role}`), address: `${at(1)}/30` },
      { ns, ifname: 'mgmt0', address: `${at(2)}/30` },
    );
    return { ns, publicIp, mgmtIp: at(2) };
  };
  const gateway = await addGateway('gw', 1);
  const clientNs = await lab.createNamespace('client');
  await internet.attach(clientNs, 'client', [2, 3, 4]);
  return {
    internet,
    gatewayNs: gateway.ns,
    gatewayPublicIp: gateway.publicIp,
    gatewayMgmtIp: gateway.mgmtIp,
    clientNs,
    clientIps: [internet.ip(2), internet.ip(3), internet.ip(4)],
    lanPrefix: `10.213.${block + 1}`,
    async addHost(role, index) {
      const ns = await lab.createNamespace(role);
      return { ns, publicIp: await internet.attach(ns, role, [index]) };
    },
    addGateway,
  };
}

/**
 * A LAN behind `routerNs` (a gateway node): a new namespace at <lanPrefix>.2 whose default route goes back
 * through the router at <lanPrefix>.1 (interface `<name>0` there; a router with several LANs gives each its own
 * `name`), which forwards. Returns the LAN host's namespace and address.
 */
export async function addLan(
  lab: Lab,
  routerNs: string,
  lanPrefix: string,
  name = 'lan',
): Promise<{ ns: string; hostIp: string; cidr: string }> {
  const ns = await lab.createNamespace(name);
  await lab.createVeth(
    { ns: routerNs, ifname: `${name}0`, address: `${lanPrefix}.1/24` },
    { ns, ifname: 'lan0', address: `${lanPrefix}.2/24` },
  );
  await lab.addRoute(ns, 'default', `${lanPrefix}.1`);
  await lab.enableForwarding(routerNs);
  return { ns, hostIp: `${lanPrefix}.2`, cidr: `${lanPrefix}.0/24` };
}
