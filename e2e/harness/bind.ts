import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.js';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// BIND 9 (Debian's bind9) in a namespace of the lab: authoritative for one test zone that takes RFC 2136 updates
// signed with a TSIG key, and a forwarding resolver for every other name (to `forwardTo`, the lab's challtestsrv), so
// one server answers the gateway and pebble for both DNS-01 and HTTP-01 names. Port 53 on `address` only.

export interface Bind {
  zone: string;
  address: string;
  keyName: string;
  /** The TSIG key, base64. */
  secret: string;
  /** The TXT values the server holds for `name` now. */
  txt(name: string): Promise<string[]>;
  readonly process: ManagedProcess;
}

export async function startBind(
  lab: Lab,
  options: { ns: string; address: string; zone: string; forwardTo: string },
): Promise<Bind> {
  const { ns, address, zone, forwardTo } = options;
  const dir = lab.makeTempDir('bind');
  const keyName = `postern-${lab.id}`;
  const secret = randomBytes(32).toString('base64');
  writeFileSync(
    join(dir, 'zone.db'),
    [
      '$TTL 60',
      `@ IN SOA ns1.${zone}. hostmaster.${zone}. 1 60 60 600 60`,
      `@ IN NS ns1.${zone}.`,
      `ns1 IN A ${address}`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'named.conf'),
    `key "${keyName}" { algorithm hmac-sha256; secret "${secret}"; };
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on port 53 { ${address}; };
  listen-on-v6 { none; };
  recursion yes;
  allow-recursion { any; };
  allow-query { any; };
  forwarders { ${forwardTo}; };
  forward only;
  dnssec-validation no;
  notify no;
};
zone "${zone}" { type primary; file "${dir}/zone.db"; allow-update { key "${keyName}"; }; };
`,
  );
  // -g: foreground, logs on stderr; as root, in a directory only it uses (the journal of the updates goes there).
  const named = lab.spawn(ns, 'named', '/usr/sbin/named', ['-g', '-4', '-c', join(dir, 'named.conf')]);
  const dig = (name: string, type: string) =>
    run('ip', ['netns', 'exec', ns, 'dig', '+short', '+norecurse', '+time=2', '+tries=1', `@${address}`, name, type]);
  await waitFor(async () => (await dig(zone, 'SOA')).includes(`ns1.${zone}`), {
    timeoutMs: 15_000,
    intervalMs: 100,
    what: `BIND serving ${zone} on ${address} (output: ${named.text.slice(-1000)})`,
  });
  return {
    zone,
    address,
    keyName,
    secret,
    process: named,
    async txt(name) {
      const out = await dig(name, 'TXT');
      return out
        .split('\n')
        .map((line) => line.trim().replace(/^"|"$/g, ''))
        .filter((line) => line !== '');
    },
  };
}
