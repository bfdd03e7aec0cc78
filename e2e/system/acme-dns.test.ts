import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainSchema, type Domain } from '@postern/contract';
import type { ApiClient } from '../harness/api.js';
import { startBind, type Bind } from '../harness/bind.js';
import { startGateway, type Gateway } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { createAcmeNetwork, startPebble } from '../harness/pebble.js';
import { createSystemTopology, type SystemTopology } from '../harness/topology.js';
import { makeTestCa, makeTestLeaf, uploadBody } from '../../apps/server/src/test/certificates.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { canRun } from '../../apps/server/src/test/requirements.js';
import { connectNode, type ConnectedNode } from './fixture.js';

// DNS-01 for real: the gateway writes the challenge record into BIND (RFC 2136 updates signed with TSIG, through
// nsupdate), waits for BIND to answer it, and pebble validates through BIND; pebble requires external account
// binding, so every certificate here also proves EAB (the CA configured through the API, as an operator would).
//
//   test process ── mgmt ── gateway ns ── internet ─┬─ ca ns: BIND on its internet address (the test zone, and a
//                                                   │         forwarder to challtestsrv for every other name),
//                                                   │         pebble, challtestsrv
//                                                   └─ node1 ns (WireGuard to the gateway, an HTTP backend)

const CA_INTERNET_INDEX = 10;
const ISSUANCE_TIMEOUT_MS = 45_000;
const BACKEND_PORT = 8080;
/** POSTERN_DRIFT_CHECK_INTERVAL for this gateway: the drift case sees a scheduled check without waiting a minute. */
const DRIFT_INTERVAL_SECONDS = 2;

/** A DER certificate's SHA-256 fingerprint as Node's TLS reports it (AA:BB:…). */
function formatFingerprint(der: ArrayBuffer): string {
  return (createHash('sha256').update(Buffer.from(der)).digest('hex').toUpperCase().match(/../g) ?? []).join(':');
}

interface HttpsAnswer {
  status: number;
  body: string;
  cert: PeerCertificate;
}

/** GET / for `servername` on host:443 trusting only `ca`: rejects when the certificate is not one `ca` vouches for. */
function getTrusting(host: string, servername: string, ca: string): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port: 443, path: '/', servername, headers: { host: servername }, ca, agent: false, timeout: 5000 },
      (res) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- an HTTPS response's socket is its TLS socket
        const cert = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, cert }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`https://${servername} via ${host}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

function answeredBy(answer: HttpsAnswer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { label?: string }).label;
  } catch {
    return undefined;
  }
}

describe.skipIf(!canRun('root', 'server-build'))(
  'DNS-01 through BIND with TSIG, wildcard certificates, EAB: pebble',
  () => {
    const lab = new Lab();
    const zone = `dns-${lab.id}.test`;
    const wildcard = `*.${zone}`;
    const httpDomain = `http-${lab.id}.test`;
    const eab = { kid: `kid-${lab.id}`, hmacKey: randomBytes(32).toString('base64url') };
    let topology: SystemTopology;
    let bind: Bind;
    let pebbleRoot: string;
    let gateway: Gateway;
    let api: ApiClient;
    let node: ConnectedNode;
    let netnsEtcDir: string | undefined;
    let wildcardDomain: Domain | undefined;

    async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${api.token ?? ''}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
    }

    async function created<T>(path: string, body: unknown): Promise<T> {
      const answer = await call('POST', path, body);
      if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body as T;
    }

    /** Polls the domain until its certificate is `want`; the other end state ends the wait at once, with its reason. */
    async function waitForState(id: number, want: 'valid' | 'failed'): Promise<Domain> {
      return waitFor(
        async () => {
          const domain = DomainSchema.parse((await call('GET', `/api/domains/${id}`)).body);
          const state = domain.certificate?.state;
          if (state === (want === 'valid' ? 'failed' : 'valid'))
            throw new Error(`certificate ${state}: ${domain.certificate?.error ?? '?'}`);
          return state === want ? domain : undefined;
        },
        { timeoutMs: ISSUANCE_TIMEOUT_MS, intervalMs: 200, what: `a ${want} certificate for domain ${id}` },
      ).catch((err: unknown) => {
        throw new Error(
          `${err instanceof Error ? err.message : String(err)}\nserver output:\n${gateway.process.text.slice(-4000)}`,
        );
      });
    }

    /** The certificate served for `servername`, trusting only `ca` (rejects for any other). */
    async function servedFingerprint(servername: string, ca: string): Promise<string> {
      return (await getTrusting(topology.gatewayMgmtIp, servername, ca)).cert.fingerprint256;
    }

    function waitUntilServedTrusted(servername: string): Promise<HttpsAnswer> {
      return waitFor(
        async () => {
          const answer = await getTrusting(topology.gatewayMgmtIp, servername, pebbleRoot);
          return answer.status === 200 && answeredBy(answer) === 'node1' && answer;
        },
        {
          timeoutMs: 15_000,
          intervalMs: 100,
          what: `node1's answer for ${servername} under a certificate from pebble`,
        },
      );
    }

    beforeAll(async () => {
      topology = await createSystemTopology(lab);
      const network = await createAcmeNetwork(lab);
      await topology.internet.attach(network.ns, 'ca', [CA_INTERNET_INDEX]);
      await lab.addRoute(topology.gatewayNs, `${network.caIp}/32`, topology.internet.ip(CA_INTERNET_INDEX));
      const dnsIp = topology.internet.ip(CA_INTERNET_INDEX);
      bind = await startBind(lab, { ns: network.ns, address: dnsIp, zone, forwardTo: network.caIp });
      const pebble = await startPebble(lab, { network, httpPort: 80, dnsServer: `${dnsIp}:53`, eab });
      await pebble.pointDomain(httpDomain, topology.gatewayPublicIp);
      pebbleRoot = await pebble.fetchIssuingRoot();

      // The gateway resolves through BIND too: the zone's SOA and name servers, and challtestsrv's names forwarded.
      netnsEtcDir = join('/etc/netns', topology.gatewayNs);
      mkdirSync(netnsEtcDir, { recursive: true });
      writeFileSync(join(netnsEtcDir, 'resolv.conf'), `nameserver ${dnsIp}\noptions timeout:2 attempts:1\n`);

      gateway = await startGateway(lab, {
        ns: topology.gatewayNs,
        apiIp: topology.gatewayMgmtIp,
        publicHost: topology.gatewayPublicIp,
        wgInterface: lab.ifName('gw'),
        env: {
          POSTERN_ACME_DIRECTORY: pebble.directoryUrl,
          POSTERN_ACME_CA_FILE: pebble.apiCaFile,
          POSTERN_ACME_SKIP_PRECHECK: 'true',
          // The harness's 127.0.0.1 answers nothing here: DNS-01 finds the zone and its servers through BIND.
          POSTERN_RESOLVERS: dnsIp,
          POSTERN_DRIFT_CHECK_INTERVAL: String(DRIFT_INTERVAL_SECONDS),
        },
      });
      api = await gateway.login();
      node = await connectNode({ lab, topology, gateway, api }, 'node1', 11);
      await node.serve('http', BACKEND_PORT);
      // pebble takes no account without EAB: the operator's CA, with the binding, made the default.
      await created('/api/certificates/authorities', {
        name: 'pebble',
        directoryUrl: pebble.directoryUrl,
        email: 'e2e@example.com',
        eabKeyId: eab.kid,
        eabHmacKey: eab.hmacKey,
        isDefault: true,
      });
    }, 120_000);

    afterAll(async () => {
      try {
        await lab.destroy();
        expect(lab.leftovers()).toEqual([]);
      } finally {
        if (netnsEtcDir !== undefined) rmSync(netnsEtcDir, { recursive: true, force: true });
      }
    });

    it('issues a wildcard certificate through RFC 2136 with TSIG, serves it for two names, removes the record', async () => {
      const provider = await created<{ id: number }>('/api/certificates/dns-providers', {
        name: 'bind',
        kind: 'rfc2136',
        server: bind.address,
        keyName: bind.keyName,
        algorithm: 'hmac-sha256',
        secret: bind.secret,
        propagationTimeoutSeconds: 30,
      });
      const domain = DomainSchema.parse(
        await created('/api/domains', {
          domain: wildcard,
          ssl: 'certbot',
          challenge: 'dns-01',
          dnsProviderId: provider.id,
        }),
      );
      wildcardDomain = await waitForState(domain.id, 'valid');
      expect(wildcardDomain.certificate).toMatchObject({
        error: null,
        issuer: expect.stringMatching(/Pebble/) as string,
        method: 'dns-01',
        names: [wildcard],
      });
      await api.createHttpService(node.node.id, {
        name: 'wild-app',
        domain: wildcard,
        backendHost: node.tunnelIp,
        backendPort: BACKEND_PORT,
      });
      for (const name of [`app.${zone}`, `www.${zone}`]) {
        const served = await waitUntilServedTrusted(name);
        expect(served.cert.subjectaltname).toBe(`DNS:${wildcard}`);
        expect(served.cert.fingerprint256).toBe(wildcardDomain.certificate?.fingerprint);
      }
      // Removed once the CA had looked; the TSIG key is in no log line.
      expect(await bind.txt(`_acme-challenge.${zone}`)).toEqual([]);
      expect(gateway.process.text).toContain('DNS-01 record removed');
      expect(gateway.process.text).not.toContain(bind.secret);
    });

    it('a wrong TSIG key fails that domain only, with a clear error; HTTP-01 and the wildcard keep working', async () => {
      const wrong = await created<{ id: number }>('/api/certificates/dns-providers', {
        name: 'bind-wrong-key',
        kind: 'rfc2136',
        server: bind.address,
        keyName: bind.keyName,
        algorithm: 'hmac-sha256',
        secret: randomBytes(32).toString('base64'),
        propagationTimeoutSeconds: 10,
      });
      const failing = DomainSchema.parse(
        await created('/api/domains', {
          domain: `*.sub.${zone}`,
          ssl: 'certbot',
          challenge: 'dns-01',
          dnsProviderId: wrong.id,
        }),
      );
      const http = DomainSchema.parse(
        await created('/api/domains', { domain: httpDomain, ssl: 'certbot', skipValidation: false }),
      );
      const failed = await waitForState(failing.id, 'failed');
      expect(failed.certificate?.error).toMatch(/bind-wrong-key.*TSIG key is wrong/);
      expect((await waitForState(http.id, 'valid')).certificate).toMatchObject({ method: 'http-01', error: null });
      if (wildcardDomain === undefined) throw new Error('needs the wildcard certificate of the first test');
      const still = DomainSchema.parse((await call('GET', `/api/domains/${wildcardDomain.id}`)).body);
      expect(still.certificate).toMatchObject({ state: 'valid', fingerprint: wildcardDomain.certificate?.fingerprint });
      expect(await bind.txt(`_acme-challenge.sub.${zone}`)).toEqual([]);
    });

    it('the drift check puts back a DNS-issued certificate removed from disk and an uploaded one altered there', async () => {
      if (wildcardDomain === undefined) throw new Error('needs the wildcard certificate of the first test');
      const wildcardFingerprint = wildcardDomain.certificate?.fingerprint;
      // The operator's own certificate for a name of its own (an exact name below the wildcard).
      const ownName = `own.${zone}`;
      const ownCa = await makeTestCa('Drift Test CA');
      const ownLeaf = await makeTestLeaf(ownCa, [ownName]);
      const own = DomainSchema.parse(await created('/api/domains', { domain: ownName, skipValidation: true }));
      const uploaded = await call('POST', `/api/domains/${own.id}/certificate`, uploadBody(ownLeaf, ownCa));
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      const ownFingerprint = formatFingerprint(ownLeaf.cert.rawData);
      await waitFor(async () => (await servedFingerprint(ownName, ownCa.pem).catch(() => null)) === ownFingerprint, {
        timeoutMs: 15_000,
        intervalMs: 100,
        what: `the uploaded certificate served for ${ownName}`,
      });

      // Behind the gateway's back: the wildcard's file is gone, the uploaded one's holds another certificate.
      const certsDir = join(gateway.dataDir, 'certs');
      const wildcardFile = join(certsDir, `${wildcard}.pem`);
      const ownFile = join(certsDir, `${ownName}.pem`);
      expect(existsSync(wildcardFile) && existsSync(ownFile)).toBe(true);
      rmSync(wildcardFile);
      const impostor = await makeTestLeaf(await makeTestCa('Impostor CA'), [ownName]);
      writeFileSync(ownFile, `${impostor.keyPem.trimEnd()}\n${impostor.pem}\n`);

      // Within a few drift intervals both are back, on disk and as nginx serves them.
      let seen = '';
      await waitFor(
        async () => {
          const state = {
            wildcardOnDisk: existsSync(wildcardFile),
            wildcardServed:
              (await servedFingerprint(`app.${zone}`, pebbleRoot).catch(() => null)) === wildcardFingerprint,
            ownServed: (await servedFingerprint(ownName, ownCa.pem).catch(() => null)) === ownFingerprint,
          };
          seen = JSON.stringify(state);
          return Object.values(state).every(Boolean);
        },
        { timeoutMs: 10 * DRIFT_INTERVAL_SECONDS * 1000, intervalMs: 200, what: 'both certificates put back' },
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\nlast seen: ${seen}\nserver output:\n${gateway.process.text.slice(-6000)}`);
      });
      expect(gateway.process.text).toMatch(
        new RegExp(`the certificate of ${ownName.replaceAll('.', '\\.')} is not the one stored`),
      );
    });
  },
);
