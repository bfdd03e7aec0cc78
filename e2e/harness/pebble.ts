import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { claimFreeRange } from './claims.js';
import { makeServerTls } from './server-tls.js';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// pebble (Let's Encrypt's test CA, Debian package) and pebble-challtestsrv (its mock DNS) inside a namespace of
// the lab. pebble resolves domains ONLY through challtestsrv (never the machine's resolver), so a test decides
// where each test domain points; a domain without a record fails validation, as with a real CA.
//
//   test process (gateway: nginx + certificate manager) ── veth /30 ── ca namespace (pebble, challtestsrv)
//       hostIp                                                          caIp

export const PEBBLE_ACME_PORT = 14000;
export const PEBBLE_MANAGEMENT_PORT = 15000;
/** Port 53: a resolv.conf has no port syntax, and a gateway under test may resolve through challtestsrv. */
export const CHALLTESTSRV_DNS_PORT = 53;
const CHALLTESTSRV_MANAGEMENT_PORT = 8055;

export interface AcmeNetwork {
  ns: string;
  /** Root-namespace end of the link: where the gateway under test listens (and what test domains resolve to). */
  hostIp: string;
  /** Namespace end: where pebble and challtestsrv listen. */
  caIp: string;
}

/** A /30 in 10.214.0.0/16 not routed on this machine yet nor claimed by another test process; released with the lab. */
async function pickFreeLink(lab: Lab): Promise<string> {
  const claim = await claimFreeRange(
    '10.214',
    () => `10.214.${String(Math.floor(Math.random() * 256))}.${String(4 * Math.floor(Math.random() * 64))}`,
    (routes, prefix) => routes.includes(`${prefix}/30`),
  );
  lab.beforeRemove(claim.release);
  return claim.value;
}

/** A namespace for the CA, linked to the test process's namespace by a veth pair. */
export async function createAcmeNetwork(lab: Lab): Promise<AcmeNetwork> {
  const ns = await lab.createNamespace('ca');
  const base = (await pickFreeLink(lab)).split('.').map(Number) as [number, number, number, number];
  const hostIp = `${base[0]}.${base[1]}.${base[2]}.${base[3] + 1}`;
  const caIp = `${base[0]}.${base[1]}.${base[2]}.${base[3] + 2}`;
  await lab.createVeth(
    { ifname: lab.ifName('ca'), address: `${hostIp}/30` },
    { ns, ifname: 'ca0', address: `${caIp}/30` },
  );
  return { ns, hostIp, caIp };
}

export interface PebbleOptions {
  network: AcmeNetwork;
  /** Port on the domain's address where pebble fetches HTTP-01 answers (the gateway's HTTP port). */
  httpPort: number;
  /** Where pebble resolves names (host:port); default challtestsrv. A BIND forwarding to challtestsrv for DNS-01. */
  dnsServer?: string;
  /** External account binding required, with this one account (key id → base64url HMAC key). */
  eab?: { kid: string; hmacKey: string };
}

export interface Pebble {
  directoryUrl: string;
  /** CA of pebble's own HTTPS endpoint: what the ACME client must trust (not the issuing root). */
  apiCaFile: string;
  /** The root pebble issues under (new on every start), from the management port. */
  fetchIssuingRoot(): Promise<string>;
  /** Makes challtestsrv answer A queries for `domain` with `address`. */
  pointDomain(domain: string, address: string): Promise<void>;
  readonly process: ManagedProcess;
}

function httpsGetText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: HTTP ${res.statusCode ?? '?'}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export async function startPebble(lab: Lab, options: PebbleOptions): Promise<Pebble> {
  const { ns, caIp } = options.network;
  const dir = lab.makeTempDir('pebble');
  const tls = await makeServerTls(dir, 'api', {
    caSubject: '/CN=Pebble API test CA',
    subject: '/CN=localhost',
    subjectAltName: `IP:${caIp},IP:127.0.0.1,DNS:localhost`,
  });
  const configFile = join(dir, 'pebble-config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      pebble: {
        listenAddress: `${caIp}:${PEBBLE_ACME_PORT}`,
        managementListenAddress: `${caIp}:${PEBBLE_MANAGEMENT_PORT}`,
        certificate: tls.certFile,
        privateKey: tls.keyFile,
        httpPort: options.httpPort,
        tlsPort: 5001,
        ocspResponderURL: '',
        externalAccountBindingRequired: options.eab !== undefined,
        ...(options.eab ? { externalAccountMACKeys: { [options.eab.kid]: options.eab.hmacKey } } : {}),
      },
    }),
  );

  // No default answers: a domain the test did not point anywhere does not resolve (the "CA refuses" case).
  const dns = lab.spawn(ns, 'pebble-challtestsrv', '/usr/bin/pebble-challtestsrv', [
    '-defaultIPv4',
    '',
    '-defaultIPv6',
    '',
    '-dns01',
    `${caIp}:${CHALLTESTSRV_DNS_PORT}`,
    '-management',
    `${caIp}:${CHALLTESTSRV_MANAGEMENT_PORT}`,
    '-http01',
    '',
    '-https01',
    '',
    '-tlsalpn01',
    '',
  ]);
  const managementUrl = `http://${caIp}:${CHALLTESTSRV_MANAGEMENT_PORT}`;
  await waitFor(
    async () => (await fetch(`${managementUrl}/clear-a`, { method: 'POST', body: '{"host":"probe.test"}' })).ok,
    {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `pebble-challtestsrv at ${managementUrl} (output: ${dns.text.slice(-500)})`,
    },
  );

  const pebble = lab.spawn(
    ns,
    'pebble',
    '/usr/bin/pebble',
    ['-config', configFile, '-dnsserver', options.dnsServer ?? `${caIp}:${CHALLTESTSRV_DNS_PORT}`],
    {
      // NOSLEEP: validate at once; NONCEREJECT=0: no random badNonce answers (they only add retries and noise).
      env: { PATH: process.env.PATH, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
    },
  );
  const ca = readFileSync(tls.caFile, 'utf8');
  const directoryUrl = `https://${caIp}:${PEBBLE_ACME_PORT}/dir`;
  await waitFor(() => httpsGetText(directoryUrl, ca), {
    timeoutMs: 15_000,
    intervalMs: 100,
    what: `pebble at ${directoryUrl}`,
  }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\npebble output:\n${pebble.text.slice(-2000)}`);
  });

  return {
    directoryUrl,
    apiCaFile: tls.caFile,
    process: pebble,
    fetchIssuingRoot: () => httpsGetText(`https://${caIp}:${PEBBLE_MANAGEMENT_PORT}/roots/0`, ca),
    async pointDomain(domain, address) {
      const response = await fetch(`${managementUrl}/add-a`, {
        method: 'POST',
        body: JSON.stringify({ host: domain, addresses: [address] }),
      });
      if (!response.ok) throw new Error(`challtestsrv add-a ${domain}: HTTP ${response.status}`);
    },
  };
}
