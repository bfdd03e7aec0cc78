import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAcmeIssuer } from '../../apps/server/src/dataplane/certs/acme.js';
import {
  createCertificateManager,
  createMemoryCertificateStore,
  type CertificateManager,
} from '../../apps/server/src/dataplane/certs/manager.js';
import type { CertificateIssuer } from '../../apps/server/src/dataplane/certs/self-signed.js';
import { createConnectionCutter } from '../../apps/server/src/dataplane/connections.js';
import { createHttpInstance } from '../../apps/server/src/dataplane/nginx/http-instance.js';
import { readLuaModule } from '../../apps/server/src/dataplane/nginx/lua-source.js';
import { renderHttpInstance } from '../../apps/server/src/dataplane/nginx/render-main.js';
import { buildRouteTable } from '../../apps/server/src/dataplane/nginx/routes.js';
import { createStreamInstances } from '../../apps/server/src/dataplane/nginx/stream-instances.js';
import { createProxy, type Proxy } from '../../apps/server/src/dataplane/proxy.js';
import type { CertificateInfo, DesiredDomain, DesiredHttpRoute } from '../../apps/server/src/dataplane/types.js';
import { Lab } from '../harness/lab.js';
import { createAcmeNetwork, startPebble, type AcmeNetwork, type Pebble } from '../harness/pebble.js';
import { freePort } from '../harness/ports.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { canRun } from '../../apps/server/src/test/requirements.js';

// The certificate manager and the real nginx of the data plane, against pebble (a real ACME CA) in a namespace
// of its own. The gateway side runs in the test process: nginx listens only on this lab's link address.

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface HttpsAnswer {
  status: number;
  cert: PeerCertificate;
  authorized: boolean;
}

/** One request on a fresh TLS connection (no agent: every request is a full handshake). */
function getOverTls(ip: string, port: number, servername: string, ca: string | undefined): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: ip,
        port,
        path: '/',
        servername,
        headers: { host: servername },
        agent: false,
        timeout: 5000,
        ...(ca === undefined ? { rejectUnauthorized: false } : { ca }),
      },
      (res) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- an HTTPS response's socket is its TLS socket
        const socket = res.socket as TLSSocket;
        const answer = {
          status: res.statusCode ?? 0,
          cert: socket.getPeerCertificate(),
          authorized: socket.authorized,
        };
        res.resume();
        res.on('end', () => resolve(answer));
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(!canRun('root'))('ACME certificates from pebble, served by nginx', () => {
  const lab = new Lab();
  const store = createMemoryCertificateStore();
  const okDomain = `ok-${lab.id}.test`;
  const refusedDomain = `refused-${lab.id}.test`;
  const domains: DesiredDomain[] = [
    { domainId: 1, domain: okDomain, ssl: 'certbot' },
    { domainId: 2, domain: refusedDomain, ssl: 'certbot' },
  ];
  let network: AcmeNetwork;
  let pebble: Pebble;
  let pebbleRoot: string;
  let proxy: Proxy;
  let manager: CertificateManager;
  let dataDir: string;
  let httpsPort: number;
  const issuedFor: string[] = [];
  const firstInfos: (CertificateInfo | null)[] = [];
  /** Undo steps, pushed as things start, so a failure half-way through beforeAll still cleans up. */
  const closers: (() => Promise<unknown>)[] = [];

  /** The real ACME issuer, counting the domains it is asked for. */
  function countingIssuer(): CertificateIssuer {
    const acme = createAcmeIssuer({
      dataDir,
      directoryUrl: pebble.directoryUrl,
      caFile: pebble.apiCaFile,
      skipPrecheck: true,
      pollMinMs: 100,
      pollMaxMs: 500,
      logger: silent,
      challenges: {
        set: (token, answer) => proxy.setChallenge(token, answer),
        remove: (token) => proxy.removeChallenge(token),
      },
    });
    return {
      issue: (domain, pemPath) => {
        issuedFor.push(domain);
        return acme.issue(domain, pemPath);
      },
    };
  }

  function newManager(): CertificateManager {
    return createCertificateManager({
      dataDir,
      acme: {},
      issuer: countingIssuer(),
      store,
      logger: silent,
      fallbackHost: network.hostIp,
      challenges: {
        set: (token, answer) => proxy.setChallenge(token, answer),
        remove: (token) => proxy.removeChallenge(token),
      },
      // The fallback is made before nginx runs: nothing to hand over yet.
      onInstalled: (name) => void (proxy as Proxy | undefined)?.certificateInstalled(name),
    });
  }

  beforeAll(async () => {
    network = await createAcmeNetwork(lab);
    const httpPort = await freePort(network.hostIp);
    httpsPort = await freePort(network.hostIp);
    pebble = await startPebble(lab, { network, httpPort });
    await pebble.pointDomain(okDomain, network.hostIp);
    pebbleRoot = await pebble.fetchIssuingRoot();

    const backend = createServer((_req, res) => res.end('hello from the backend'));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => backend.close(resolve)));
    const route: DesiredHttpRoute = {
      serviceId: 1,
      nodeId: 1,
      domain: okDomain,
      pathLocation: '/',
      backendProto: 'http',
      backendHost: '127.0.0.1',
      backendPort: (backend.address() as AddressInfo).port,
      allowedIps: [],
      blockedIps: [],
    };

    dataDir = lab.makeTempDir('data');
    manager = newManager();
    // The data plane's boot order: fallback, nginx, certificates before the routes naming them, then issuance.
    await manager.ensureFallback();
    const prefixDir = join(dataDir, 'nginx');
    const certsDir = join(dataDir, 'certs');
    const options = {
      prefixDir,
      certsDir,
      httpPort,
      httpsPort,
      noDomainHttpsPort: await freePort(network.hostIp),
      listenAddress: network.hostIp,
      consoleHost: 'console.invalid',
      consoleUpstream: 'http://127.0.0.1:1',
      tunnelAddress: null,
      resolvers: [],
    };
    const http = createHttpInstance({
      prefixDir,
      logger: silent,
      render: (dir) => renderHttpInstance(options, dir, readLuaModule()),
    });
    proxy = createProxy({
      prefixDir,
      certsDir,
      http,
      streams: createStreamInstances({ prefixDir, logger: silent }),
      cutter: createConnectionCutter(silent),
      logger: silent,
    });
    await proxy.start();
    closers.push(() => proxy.stop({ keepServing: false }));
    for (const domain of domains) firstInfos.push(await manager.ensure(domain));
    await proxy.publishCertificates(domains.map((d) => d.domain));
    await proxy.syncRoutes(
      buildRouteTable([route], domains).hosts,
      domains.map((d) => d.domain),
    );
    manager.start();
    closers.push(() => {
      manager.stop();
      return Promise.resolve();
    });
  }, 120_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await lab.destroy();
  });

  it("issues a certificate from pebble that a client trusting only pebble's root accepts", async () => {
    // Never dark: before the CA answered, the domain already had a (self-signed) certificate.
    expect(firstInfos[0]).toMatchObject({ state: 'pending', issuer: `CN=${okDomain}` });
    await manager.idle();
    expect(manager.info(okDomain)).toMatchObject({
      state: 'valid',
      issuer: expect.stringContaining('Pebble Intermediate') as string,
      error: null,
    });
    const answer = await getOverTls(network.hostIp, httpsPort, okDomain, pebbleRoot);
    expect(answer.authorized).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.cert.subjectaltname).toBe(`DNS:${okDomain}`);
    expect(answer.cert.fingerprint256).toBe(manager.info(okDomain)?.fingerprint);
  });

  it("ends in failed with the CA's reason for a domain pebble cannot validate, still serving self-signed", async () => {
    await manager.idle();
    const info = manager.info(refusedDomain);
    expect(info?.state).toBe('failed');
    expect(info?.error).toMatch(/DNS|NXDOMAIN|no valid A records|resolv/i);
    await expect(getOverTls(network.hostIp, httpsPort, refusedDomain, pebbleRoot)).rejects.toThrow(/self[- ]signed/i);
    const answer = await getOverTls(network.hostIp, httpsPort, refusedDomain, undefined);
    expect(answer.cert.issuer.CN).toBe(refusedDomain);
  });

  it('replaces the certificate on a forced renewal while a client keeps making requests', async () => {
    const before = manager.info(okDomain)?.fingerprint;
    const failures: string[] = [];
    const servedFingerprints = new Set<string>();
    let requests = 0;
    let keepGoing = true;
    const client = (async () => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- cleared by the test once it has seen enough
      while (keepGoing) {
        try {
          const answer = await getOverTls(network.hostIp, httpsPort, okDomain, pebbleRoot);
          if (answer.status !== 200 || !answer.authorized)
            failures.push(`status ${answer.status}, authorized ${String(answer.authorized)}`);
          servedFingerprints.add(answer.cert.fingerprint256);
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
        }
        requests++;
      }
    })();
    await waitFor(() => requests >= 5, { timeoutMs: 10_000, intervalMs: 20, what: 'the client to make requests' });
    const renewed = await manager.forceRenew(okDomain);
    const after = renewed.fingerprint ?? '';
    await waitFor(() => servedFingerprints.has(after), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'nginx to serve the renewed certificate',
    });
    const settledAt = requests;
    await waitFor(() => requests >= settledAt + 5, {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'more requests on the new certificate',
    });
    keepGoing = false;
    await client;

    expect(renewed.state).toBe('valid');
    expect(after).not.toBe(before);
    expect(failures).toEqual([]);
    expect(servedFingerprints).toEqual(new Set([before, after]));
    const served = new X509Certificate((await getOverTls(network.hostIp, httpsPort, okDomain, pebbleRoot)).cert.raw);
    expect(served.fingerprint256).toBe(after);
  });

  it('does not re-issue a valid certificate after a restart', async () => {
    await manager.idle();
    manager.stop();
    const before = manager.info(okDomain);
    const issuedBefore = issuedFor.filter((domain) => domain === okDomain).length;

    manager = newManager(); // same data dir and store, as after a restart
    manager.start();
    expect(await manager.ensure(domains[0] as DesiredDomain)).toEqual(before);
    await manager.idle();
    expect(issuedFor.filter((domain) => domain === okDomain)).toHaveLength(issuedBefore);
    expect((await getOverTls(network.hostIp, httpsPort, okDomain, pebbleRoot)).cert.fingerprint256).toBe(
      before?.fingerprint,
    );
  });
});
