import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainSchema, type Domain } from '@postern/contract';
import type { ApiClient } from '../harness/api.js';
import { startGateway, type Gateway } from '../harness/gateway.js';
import { Lab } from '../harness/lab.js';
import { createAcmeNetwork, startPebble } from '../harness/pebble.js';
import { createSystemTopology, type SystemTopology } from '../harness/topology.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { connectNode, type ConnectedNode } from './fixture.js';
import { canRun } from '../../apps/server/src/test/requirements.js';
import { makeTestCa, makeTestLeaf, uploadBody } from '../../apps/server/src/test/certificates.js';

// The real gateway (server, nginx, certificate manager) obtaining certificates from pebble, driven only through
// the API, as an operator would:
//
//   test process ── mgmt ── gateway ns ── internet ─┬─ ca ns (pebble, challtestsrv: the DNS of the test domains)
//        │                                          └─ node1 ns (WireGuard to the gateway, an HTTP backend)
//        └──────────────── veth ─────────────────────── ca ns (test process ↔ pebble's management ports)
//
// The gateway resolves names through challtestsrv (a resolv.conf for its namespace, which `ip netns exec`
// mounts over /etc/resolv.conf), so its "does this domain point here" check sees the same DNS as the CA.

/** The CA namespace's address on the internet bridge (the gateway is .1, the client .2-.4). */
const CA_INTERNET_INDEX = 10;
const ISSUANCE_TIMEOUT_MS = 30_000;
const BACKEND_PORT = 8080;

interface HttpsAnswer {
  status: number;
  body: string;
  cert: PeerCertificate;
}

/**
 * GET / for `servername` on a fresh connection to host:443, trusting only `ca`: rejects when the certificate is
 * not one `ca` vouches for (with the reason), else resolves with the answer and the certificate presented.
 */
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

/** GET / for `servername` on host:443 trusting nothing (a self-signed certificate is fine): status and certificate. */
function getUnverified(host: string, servername: string): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port: 443,
        path: '/',
        servername,
        headers: { host: servername },
        rejectUnauthorized: false,
        agent: false,
        timeout: 5000,
      },
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

/** Only the TLS handshake with host:443 for `servername`, trusting only `ca`: the certificate presented. */
function handshakeTrusting(host: string, servername: string, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: 443, servername, ca, timeout: 5000 }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('timeout', () => socket.destroy(new Error(`TLS handshake for ${servername} via ${host}: timed out`)));
    socket.on('error', reject);
  });
}

function answeredBy(answer: HttpsAnswer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { label?: string }).label;
  } catch {
    return undefined;
  }
}

/** The API's domain routes, with the session of `api` (the harness client has no domain methods yet). */
async function callDomains(
  api: ApiClient,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${api.token ?? ''}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: await response.json() };
}

function fieldMessage(body: unknown, field: string): string | undefined {
  const errors = (body as { errors?: { body?: { field: string; message: string }[] } }).errors?.body ?? [];
  return errors.find((error) => error.field === field)?.message;
}

describe.skipIf(!canRun('root', 'server-build'))('ACME certificates through the real gateway, from pebble', () => {
  const lab = new Lab();
  const okDomain = `ok-${lab.id}.test`;
  const elsewhereDomain = `elsewhere-${lab.id}.test`;
  const unknownDomain = `unknown-${lab.id}.test`;
  let topology: SystemTopology;
  let pebbleRoot: string;
  let gateway: Gateway;
  let api: ApiClient;
  let node: ConnectedNode;
  let netnsEtcDir: string | undefined;
  /** The domain of the first test, as the API showed it once its certificate was valid. */
  let issued: Domain | undefined;

  async function getDomain(id: number): Promise<Domain> {
    const { status, body } = await callDomains(api, 'GET', `/api/domains/${id}`);
    if (status !== 200) throw new Error(`GET /api/domains/${id} answered ${status}: ${JSON.stringify(body)}`);
    return DomainSchema.parse(body);
  }

  /** Polls the domain until its certificate is valid; a `failed` state ends the wait at once, with its reason. */
  async function waitForIssuance(id: number): Promise<Domain> {
    return waitFor(
      async () => {
        const domain = await getDomain(id);
        if (domain.certificate?.state === 'failed')
          throw new Error(`issuance failed: ${domain.certificate.error ?? '?'}`);
        return domain.certificate?.state === 'valid' ? domain : undefined;
      },
      { timeoutMs: ISSUANCE_TIMEOUT_MS, intervalMs: 200, what: `a valid certificate for domain ${id}` },
    ).catch((err: unknown) => {
      throw new Error(
        `${err instanceof Error ? err.message : String(err)}\nserver output:\n${gateway.process.text.slice(-3000)}`,
      );
    });
  }

  /**
   * Polls the gateway's 443 (from the test process, through the management link: nginx listens on every address)
   * until a client trusting only pebble's root gets node1's answer for `servername`.
   */
  function waitUntilServedTrusted(servername: string, ca = pebbleRoot): Promise<HttpsAnswer> {
    return waitFor(
      async () => {
        const answer = await getTrusting(topology.gatewayMgmtIp, servername, ca);
        return answer.status === 200 && answeredBy(answer) === 'node1' && answer;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: `node1's answer for ${servername} under a certificate from pebble` },
    );
  }

  beforeAll(async () => {
    topology = await createSystemTopology(lab);
    const network = await createAcmeNetwork(lab);
    // The CA namespace also joins the internet: pebble fetches HTTP-01 answers from the gateway's public address,
    // and the gateway reaches pebble's address (the one in pebble's HTTPS certificate) through it.
    await topology.internet.attach(network.ns, 'ca', [CA_INTERNET_INDEX]);
    await lab.addRoute(topology.gatewayNs, `${network.caIp}/32`, topology.internet.ip(CA_INTERNET_INDEX));
    const pebble = await startPebble(lab, { network, httpPort: 80 });
    await pebble.pointDomain(okDomain, topology.gatewayPublicIp);
    await pebble.pointDomain(elsewhereDomain, topology.clientIps[0]); // a host with nothing on port 80
    pebbleRoot = await pebble.fetchIssuingRoot();

    netnsEtcDir = join('/etc/netns', topology.gatewayNs);
    mkdirSync(netnsEtcDir, { recursive: true });
    writeFileSync(join(netnsEtcDir, 'resolv.conf'), `nameserver ${network.caIp}\noptions timeout:2 attempts:1\n`);

    gateway = await startGateway(lab, {
      ns: topology.gatewayNs,
      apiIp: topology.gatewayMgmtIp,
      publicHost: topology.gatewayPublicIp,
      wgInterface: lab.ifName('gw'),
      env: {
        POSTERN_ACME_DIRECTORY: pebble.directoryUrl,
        POSTERN_ACME_EMAIL: 'e2e@example.com',
        POSTERN_ACME_CA_FILE: pebble.apiCaFile,
        // acme-client's own pre-check resolves and fetches the token like the CA: it must pass here too.
        POSTERN_ACME_SKIP_PRECHECK: 'false',
      },
    });
    api = await gateway.login();
    node = await connectNode({ lab, topology, gateway, api }, 'node1', 11);
    await node.serve('http', BACKEND_PORT);
  }, 120_000);

  afterAll(async () => {
    try {
      await lab.destroy();
      expect(lab.leftovers()).toEqual([]);
    } finally {
      if (netnsEtcDir !== undefined) rmSync(netnsEtcDir, { recursive: true, force: true });
    }
  });

  it('issues a certificate from pebble for a certbot domain that points at the gateway, served on 443', async () => {
    const created = await callDomains(api, 'POST', '/api/domains', {
      domain: okDomain,
      ssl: 'certbot',
      skipValidation: false,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const domain = DomainSchema.parse(created.body);
    expect(domain).toMatchObject({ domain: okDomain, ssl: 'certbot' });

    issued = await waitForIssuance(domain.id);
    expect(issued.certificate).toMatchObject({
      state: 'valid',
      error: null,
      issuer: expect.stringMatching(/Pebble/) as string,
    });
    expect(Date.parse(issued.certificate?.notAfter ?? '')).toBeGreaterThan(Date.now());
    expect(gateway.process.text).toContain('requesting from the ACME CA'); // what the restart test looks for

    await api.createHttpService(node.node.id, {
      name: 'acme-app',
      domain: okDomain,
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    const served = await waitUntilServedTrusted(okDomain);
    expect(served.cert.subjectaltname).toBe(`DNS:${okDomain}`);
    expect(served.cert.fingerprint256).toBe(issued.certificate?.fingerprint);
  });

  it('refuses a certbot domain that does not point at the gateway with 422 on domain', async () => {
    const refusal = async (name: string): Promise<string | undefined> => {
      const refused = await callDomains(api, 'POST', '/api/domains', {
        domain: name,
        ssl: 'certbot',
        skipValidation: false,
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      return fieldMessage(refused.body, 'domain');
    };
    // Resolves, but elsewhere (and the gateway's token does not come back through it): says where it points.
    const elsewhere = await refusal(elsewhereDomain);
    expect(elsewhere).toContain(elsewhereDomain);
    expect(elsewhere).toContain(topology.clientIps[0]);
    // No record at all.
    expect(await refusal(unknownDomain)).toContain(unknownDomain);
    const { body } = await callDomains(api, 'GET', '/api/domains');
    expect(JSON.stringify(body)).not.toMatch(/elsewhere-|unknown-/);
  });

  it("serves the operator's own certificate (checked, its key never answered), and a wildcard's for the names below it", async () => {
    const ownCa = await makeTestCa(`Own CA ${lab.id}`);
    const ownDomain = `own-${lab.id}.test`;
    const wildcard = `*.wild-${lab.id}.test`;
    const upload = async (name: string, certNames: string[]) => {
      const created = await callDomains(api, 'POST', '/api/domains', { domain: name });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const { id } = DomainSchema.parse(created.body);
      const leaf = await makeTestLeaf(ownCa, certNames);
      const uploaded = await callDomains(api, 'POST', `/api/domains/${id}/certificate`, uploadBody(leaf, ownCa));
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      expect(JSON.stringify(uploaded.body)).not.toContain(leaf.keyPem.split('\n')[1]);
      expect(DomainSchema.parse(uploaded.body)).toMatchObject({ ssl: 'uploaded' });
      return leaf;
    };
    const own = await upload(ownDomain, [ownDomain]);
    const wild = await upload(wildcard, [wildcard]);
    // Another exact domain below the wildcard, with no service: never answered by the wildcard's services.
    expect((await callDomains(api, 'POST', '/api/domains', { domain: `mine.wild-${lab.id}.test` })).status).toBe(201);
    await api.createHttpService(node.node.id, {
      name: 'own-app',
      domain: ownDomain,
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });
    await api.createHttpService(node.node.id, {
      name: 'wild-app',
      domain: wildcard,
      backendHost: node.tunnelIp,
      backendPort: BACKEND_PORT,
    });

    const fingerprintOf = (leaf: typeof own) => new X509Certificate(leaf.pem).fingerprint256;
    const served = await waitUntilServedTrusted(ownDomain, ownCa.pem);
    expect(served.cert.fingerprint256).toBe(fingerprintOf(own));
    const below = await waitUntilServedTrusted(`shop.wild-${lab.id}.test`, ownCa.pem);
    expect(below.cert.fingerprint256).toBe(fingerprintOf(wild));
    const exact = await getUnverified(topology.gatewayMgmtIp, `mine.wild-${lab.id}.test`);
    expect(exact.status).toBe(404);
    expect(exact.cert.fingerprint256).not.toBe(fingerprintOf(wild));
    const listed = await callDomains(api, 'GET', `/api/certificates`);
    expect(listed.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ domain: ownDomain, method: 'uploaded', names: [ownDomain] }),
        expect.objectContaining({ domain: wildcard, method: 'uploaded', names: [wildcard] }),
      ]),
    );
  });

  it('serves the same certificate after a restart, without issuing a new one', async () => {
    if (issued === undefined) throw new Error('needs the certificate the first test obtained');
    const fingerprint = issued.certificate?.fingerprint;
    await gateway.restart();
    api = await gateway.login();

    const afterRestart = await getDomain(issued.id);
    expect(afterRestart.certificate).toMatchObject({ state: 'valid', fingerprint });
    // Only the certificate: the proxied answer also waits for node1's new WireGuard session (restart.test.ts).
    const served = await waitFor(() => handshakeTrusting(topology.gatewayMgmtIp, okDomain, pebbleRoot), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: `nginx to serve ${okDomain} again with pebble's certificate`,
    });
    expect(served.fingerprint256).toBe(fingerprint);
    expect((await getDomain(issued.id)).certificate).toMatchObject({ state: 'valid', fingerprint });
    // The restarted server never asked the CA (its log would say so): the certificate on disk was kept.
    expect(gateway.process.text).not.toContain('requesting from the ACME CA');
  });
});
