import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../atomic-write.js';
import { createSelfSignedPem, pemPath } from '../certs/self-signed.js';
import { createConnectionCutter } from '../connections.js';
import { createProxy, type Proxy } from '../proxy.js';
import type { DesiredDomain, DesiredHttpRoute, HttpTraffic } from '../types.js';
import { createHttpInstance, type HttpInstance } from './http-instance.js';
import { canRunNginx, loopbackRenderOptions, silentLogger } from './integration-support.js';
import { readLuaModule } from './lua-source.js';
import { FALLBACK_CERT_NAME, type NginxRenderOptions } from './options.js';
import { isAlive, readChildPids, waitFor } from './process-info.js';

const isZombie = (pid: number): boolean => {
  try {
    return /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};
import { renderHttpInstance } from './render-main.js';
import { buildRouteTable } from './routes.js';
import { createStreamInstances } from './stream-instances.js';

// Real nginx with the Lua module on loopback high ports: routes, access lists, certificates and ACME answers are data
// pushed at run time; adoption, self-healing and the precise cut-off are proven against the real processes.

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  fingerprint?: string;
}

function get(
  url: string,
  options: { host?: string; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const target = new URL(url);
  const isTls = target.protocol === 'https:';
  const request = isTls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        agent: false,
        timeout: options.timeoutMs ?? 3000,
        rejectUnauthorized: false,
        headers: { Host: options.host ?? '127.0.0.1', ...options.headers },
        ...(isTls && options.host ? { servername: options.host } : {}),
      },
      (res) => {
        let body = '';
        const socket = res.socket as { getPeerCertificate?: () => { fingerprint256?: string } };
        const fingerprint = socket.getPeerCertificate?.().fingerprint256;
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers, ...(fingerprint ? { fingerprint } : {}) }),
        );
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/**
 * One GET whose request line carries exactly the bytes of `target` (Node's client refuses or re-encodes some of
 * them): the status, and the path the backend received when it answered (its body starts `backend <url> `).
 */
function rawGet(
  port: number,
  host: string,
  target: string,
  head = `HTTP/1.1\r\nHost: ${host}\r\nConnection: close`,
): Promise<{ status: number; backendPath?: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: host, rejectUnauthorized: false }, () => {
      socket.write(Buffer.from(`GET ${target} ${head}\r\n\r\n`, 'latin1'));
    });
    const chunks: Buffer[] = [];
    socket.setTimeout(3000, () => socket.destroy(new Error(`timeout for ${target}`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // nginx may reset the connection right after answering a request it refuses: the answer is what counts.
    socket.on('error', (err: Error) => (chunks.length === 0 ? reject(err) : undefined));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(text)?.[1] ?? 0);
      const backendPath = /\r\n\r\nbackend (\S*) host=/.exec(text)?.[1];
      resolve({ status, ...(backendPath === undefined ? {} : { backendPath }) });
    });
  });
}

/** Opens a request whose response never ends (the backend trickles), resolving once the first bytes arrived. */
function openStream(
  url: string,
  host: string,
): Promise<{ ended: Promise<'closed'>; chunks: () => number; close: () => void }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let count = 0;
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.pathname,
        agent: false,
        rejectUnauthorized: false,
        servername: host,
        headers: { Host: host },
      },
      (res: IncomingMessage) => {
        const ended = new Promise<'closed'>((done) => {
          res.on('close', () => done('closed'));
          res.on('error', () => done('closed'));
        });
        res.on('data', () => {
          count++;
          if (count === 1) resolve({ ended, chunks: () => count, close: () => req.destroy() });
        });
      },
    );
    req.on('error', (err) => (count === 0 ? reject(err) : undefined));
    req.end();
  });
}

describe.skipIf(!canRunNginx)('the HTTP instance (real nginx + Lua)', () => {
  let dataDir = '';
  let prefixDir = '';
  let certsDir = '';
  let options: NginxRenderOptions;
  let backend: Server;
  let backendPort = 0;
  const trickles = new Set<ServerResponse>();
  let instance: HttpInstance;
  let proxy: Proxy;
  const domains: DesiredDomain[] = [
    { domainId: 1, domain: 'app.test', ssl: 'self-signed' },
    { domainId: 2, domain: 'other.test', ssl: 'self-signed' },
  ];

  const route = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
    serviceId: 1,
    nodeId: 1,
    domain: 'app.test',
    pathLocation: '/',
    backendProto: 'http',
    backendHost: '127.0.0.1',
    backendPort,
    allowedIps: [],
    blockedIps: [],
    ...over,
  });

  const makeInstance = (): HttpInstance =>
    createHttpInstance({
      prefixDir,
      logger: silentLogger,
      render: (dir, dicts) => renderHttpInstance(options, dir, readLuaModule(), dicts),
    });
  const makeProxy = (http: HttpInstance): Proxy =>
    createProxy({
      prefixDir,
      certsDir,
      http,
      streams: createStreamInstances({ prefixDir, logger: silentLogger, listenAddress: '127.0.0.1' }),
      cutter: createConnectionCutter(silentLogger),
      logger: silentLogger,
    });
  const serve = async (routes: DesiredHttpRoute[], target: Proxy = proxy) => {
    const table = buildRouteTable(routes, domains, { reservedHosts: [options.consoleHost] });
    await target.syncRoutes(
      table.hosts,
      domains.map((d) => d.domain),
    );
    return table;
  };
  const https = (port: number, path: string, host: string) => get(`https://127.0.0.1:${port}${path}`, { host });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-http-it-'));
    prefixDir = join(dataDir, 'nginx');
    certsDir = join(dataDir, 'certs');
    await mkdir(certsDir, { recursive: true, mode: 0o700 });
    for (const name of [FALLBACK_CERT_NAME, 'app.test', 'other.test']) {
      await writeFileAtomic(
        pemPath(certsDir, name),
        await createSelfSignedPem(name === FALLBACK_CERT_NAME ? 'gw.test' : name),
        0o600,
      );
    }
    backend = createHttpServer((req, res) => {
      if (req.url?.startsWith('/trickle')) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('data: first\n\n');
        trickles.add(res);
        const timer = setInterval(() => res.write('data: more\n\n'), 100);
        res.on('close', () => {
          clearInterval(timer);
          trickles.delete(res);
        });
        return;
      }
      if (req.url?.startsWith('/cookies')) {
        // What a hostile backend tries with the console's session cookie: read it, and set one of its own.
        res.setHeader('Set-Cookie', [
          '__Host-token=planted; Path=/; Secure; HttpOnly; SameSite=Lax',
          '__HOST-TOKEN = planted; Path=/; Secure',
          '=__Host-token=planted; Path=/; Secure',
          'app=kept; Path=/',
          '__Host-tokenless=kept; Path=/; Secure',
        ]);
        res.end(`cookie=${String(req.headers.cookie)}`);
        return;
      }
      res.end(`backend ${req.url ?? ''} host=${String(req.headers.host)} auth=${String(req.headers.authorization)}`);
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
    options = {
      ...(await loopbackRenderOptions({ prefixDir, certsDir, consoleUpstream: `http://127.0.0.1:${backendPort}` })),
      // Short, so a stalled handshake is seen closed at once; every other request here sends its headers at once.
      handshakeTimeoutSeconds: 2,
    };
    instance = makeInstance();
    proxy = makeProxy(instance);
    await proxy.start();
    await proxy.publishCertificates(['app.test', 'other.test']);
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await proxy?.stop({ keepServing: false });
    for (const res of trickles) res.destroy();
    await new Promise((resolve) => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
      backend?.close(resolve);
    });
    await rm(dataDir, { recursive: true, force: true });
  });

  it('routes by host and longest prefix, with each service’s access list, and the console only on its own host', async () => {
    await serve([
      route({ serviceId: 1, pathLocation: '/' }),
      route({ serviceId: 2, pathLocation: '/api/', blockedIps: ['127.0.0.0/8'] }),
      route({ serviceId: 3, pathLocation: '/open', allowedIps: ['127.0.0.1'] }),
      route({ serviceId: 4, domain: null, pathLocation: '/tools' }),
    ]);
    expect((await https(options.httpsPort, '/x?y=1', 'app.test')).body).toBe(
      'backend /x?y=1 host=app.test auth=undefined',
    );
    expect((await https(options.httpsPort, '/api', 'app.test')).status).toBe(403);
    expect((await https(options.httpsPort, '/api/v1', 'app.test')).status).toBe(403);
    // `/api` is not a prefix of `/apix`: that one falls to `/`.
    expect((await https(options.httpsPort, '/apix', 'app.test')).status).toBe(200);
    expect((await https(options.httpsPort, '/open/a', 'app.test')).status).toBe(200);
    // nginx normalises the path before the Lua module matches it: no way around an access list.
    expect((await https(options.httpsPort, '/x/../api/v1', 'app.test')).status).toBe(403);
    expect((await https(options.httpsPort, '/%61pi/v1', 'app.test')).status).toBe(403);
    // A host that is no domain gets nothing; the console's host gets only the console.
    expect((await https(options.httpsPort, '/tools', 'unknown.test')).status).toBe(404);
    expect((await https(options.httpsPort, '/tools', 'gw.test')).body).toBe(
      'backend /tools host=gw.test auth=undefined',
    );
    // Services without a domain live on their own port, where /api (the console's cookie path) is nobody's.
    expect((await https(options.noDomainHttpsPort, '/tools/a', 'gw.test')).status).toBe(200);
    expect((await https(options.noDomainHttpsPort, '/api/auth/login', 'gw.test')).status).toBe(404);
    expect((await https(options.noDomainHttpsPort, '/x', 'app.test')).status).toBe(404);
    // A request with no Host at all (HTTP/1.0) on the domains' port is no domain's, and never a no-domain service's:
    // those live on their own port only.
    expect(await rawGet(options.httpsPort, 'app.test', '/tools/a', 'HTTP/1.0')).toEqual({ status: 404 });
  });

  it('cannot be tricked past a blocked path by spelling: each spelling is blocked, refused, or reaches the backend as matched', async () => {
    await serve([
      route({ serviceId: 1, pathLocation: '/' }),
      route({ serviceId: 2, pathLocation: '/adm', blockedIps: ['127.0.0.0/8'] }),
      route({ serviceId: 3, pathLocation: '/skip', blockedIps: ['127.0.0.0/8'] }),
    ]);
    // Request target → 403 (blocked: the /adm or /skip route matched), 400 (refused: ambiguous or malformed), or the
    // exact path (and query) the open route's backend received. The table of the dataplane README, row by row.
    const expected: Record<string, number | string> = {
      // Spellings every backend reads as /adm: matched as /adm.
      '/adm': 403,
      '/adm/x': 403,
      '/adm/': 403,
      '//adm': 403,
      '/./adm': 403,
      '/x/../adm': 403,
      '/ad%6d': 403,
      '/%61dm/x': 403,
      '/x/%2e%2e/adm': 403,
      // Measured bypasses: letter case (IIS), `;` parameters (Tomcat, Jetty, Spring), an encoded `;`
      // (Spring decodes first), trailing space and dot (IIS, Windows).
      '/ADM': 400,
      '/Adm/x': 400,
      '/adm;x': 400,
      '/adm;x/y': 400,
      '/adm;': 400,
      '/adm%3bx': 400,
      '/adm%3Bx': 400,
      '/adm%20': 400,
      '/adm.': 400,
      '/adm..': 400,
      '/adm.%20.': 400,
      '/adm%2e': 400,
      '/ADM%2E%20/x': 400,
      // Tomcat's `..;` (a parent segment once its parameter is stripped) and other dot segments in disguise.
      '/x/..;/adm': 400,
      '/x/..%3b/adm': 400,
      '/x/.;/adm': 400,
      '/x/...': 400,
      '/x/..%20/adm': 400,
      // Encoded slashes and backslashes, raw backslashes (IIS reads `\` as `/`).
      '/x/..%2fadm': 400,
      '/adm%2fx': 400,
      '/adm%2Fx': 400,
      '/adm%5cx': 400,
      '/adm\\x': 400,
      '/x\\..\\adm': 400,
      // NUL and other control bytes, C1 controls.
      '/adm%00': 400,
      '/adm%0a': 400,
      '/adm%09': 400,
      '/adm%7f': 400,
      '/adm%c2%85': 400,
      // Invalid UTF-8: overlong `.` and `/`, a stray byte, a surrogate, a truncated sequence.
      '/x/%c0%ae%c0%ae/adm': 400,
      '/x%c0%afadm': 400,
      '/adm%ff': 400,
      '/adm%ed%a0%80': 400,
      '/adm%e2%84': 400,
      // Double encoding (a backend that decodes twice).
      '/ad%256d': 400,
      '/x/%252e%252e/adm': 400,
      // NTFS streams (`adm::$DATA` is adm), encoded `?` and `#` (a backend that splits after decoding).
      '/adm::$DATA': 400,
      '/adm:x': 400,
      '/adm%3fx': 400,
      '/adm%23x': 400,
      '/adm#x': 400,
      '/adm?x=1': 403,
      // Look-alikes a case-insensitive backend folds into ASCII: fullwidth letters, long s, Kelvin sign, dotless
      // and dotted i.
      '/%ef%bd%81dm': 400,
      '/%EF%BC%A1%EF%BC%A4%EF%BC%AD': 400,
      '/%c5%bfkip': 400,
      '/s%e2%84%aaip': 400,
      '/sk%c4%b1p': 400,
      '/SK%C4%B0P': 400,
      // Above the root.
      '/%2e%2e/adm': 400,
      // Everything else reaches the open route's backend in one spelling: dot segments resolved, slashes merged,
      // unreserved characters decoded, other encodings in upper case, the rest as sent; the query untouched.
      '/x/./y//z': '/x/y/z',
      '/adm/../x': '/x',
      '/x/.': '/x/',
      '/%7Euser/%41%2c': '/~user/A%2C',
      '/caf%c3%a9': '/caf%C3%A9',
      '/caf\u00c3\u00a9': '/caf%C3%A9',
      '/a,b;v=1/c': '/a,b;v=1/c',
      '/a|b': '/a%7Cb',
      '/a%20b': '/a%20b',
      '/admin': '/admin',
      '/adm-x.': '/adm-x.',
      '/x/adm.': '/x/adm.',
      '/adm%25': '/adm%25',
      '/pages/p;jsessionid=1?x=1': '/pages/p;jsessionid=1?x=1',
      '/q?x=%2F&y=/../adm&z=%00': '/q?x=%2F&y=/../adm&z=%00',
      '/ADMIN/x': '/ADMIN/x',
    };
    const actual: Record<string, number | string> = {};
    for (const target of Object.keys(expected)) {
      const answer = await rawGet(options.httpsPort, 'app.test', target);
      actual[target] = answer.status === 200 && answer.backendPath !== undefined ? answer.backendPath : answer.status;
    }
    expect(actual).toEqual(expected);
  });

  it('keeps the console’s session cookie from services without a domain: never sent to them, never set by them', async () => {
    await serve([route({ serviceId: 5, domain: null, pathLocation: '/cookies' }), route({ serviceId: 6 })]);
    const cookie = 'theme=dark; __Host-token=the-session; other=1; __HOST-TOKEN=x; =__Host-token=y';
    const noDomain = await get(`https://127.0.0.1:${options.noDomainHttpsPort}/cookies/a`, {
      host: 'gw.test',
      headers: { Cookie: cookie },
    });
    expect(noDomain.status).toBe(200);
    expect(noDomain.body).toBe('cookie=theme=dark; other=1');
    expect(noDomain.headers['set-cookie']).toEqual(['app=kept; Path=/', '__Host-tokenless=kept; Path=/; Secure']);
    // Only the session cookie: alone, nothing is left of the header.
    const alone = await get(`https://127.0.0.1:${options.noDomainHttpsPort}/cookies/b`, {
      host: 'gw.test',
      headers: { Cookie: '__Host-token=the-session' },
    });
    expect(alone.body).toBe('cookie=undefined');
    // A domain is another host (the console's host-only cookie never goes there): its cookies are its own.
    const onDomain = await get(`https://127.0.0.1:${options.httpsPort}/cookies/c`, {
      host: 'app.test',
      headers: { Cookie: cookie },
    });
    expect(onDomain.body).toBe(`cookie=${cookie}`);
    expect(onDomain.headers['set-cookie']).toHaveLength(5);
    // And the console itself gets and sets its cookie.
    const console = await get(`https://127.0.0.1:${options.httpsPort}/cookies/d`, {
      host: 'gw.test',
      headers: { Cookie: '__Host-token=the-session' },
    });
    expect(console.body).toBe('cookie=__Host-token=the-session');
    expect(console.headers['set-cookie']).toHaveLength(5);
  });

  it('serves each domain’s own certificate by SNI and the fallback otherwise, without a reload', async () => {
    const own = async (name: string) =>
      new X509Certificate(await readFile(pemPath(certsDir, name), 'utf8')).fingerprint256;
    expect((await https(options.httpsPort, '/', 'app.test')).fingerprint).toBe(await own('app.test'));
    expect((await https(options.httpsPort, '/', 'nobody.test')).fingerprint).toBe(await own(FALLBACK_CERT_NAME));
    const workers = await readChildPids(instance.pid() ?? 0);
    await writeFileAtomic(pemPath(certsDir, 'app.test'), await createSelfSignedPem('app.test'), 0o600);
    await proxy.certificateInstalled('app.test');
    expect((await https(options.httpsPort, '/', 'app.test')).fingerprint).toBe(await own('app.test'));
    expect(await readChildPids(instance.pid() ?? 0)).toEqual(workers);
  });

  it('serves a wildcard domain for the names one label below it, with its certificate, and exact names first', async () => {
    const own = async (name: string) =>
      new X509Certificate(await readFile(pemPath(certsDir, name), 'utf8')).fingerprint256;
    // A wildcard domain, and another owner's exact name below it that has no service (yet): this test's only.
    const wild: DesiredDomain[] = [
      { domainId: 3, domain: '*.apps.test', ssl: 'self-signed' },
      { domainId: 4, domain: 'mine.apps.test', ssl: 'self-signed' },
    ];
    for (const { domain } of wild) {
      await writeFileAtomic(pemPath(certsDir, domain), await createSelfSignedPem(domain), 0o600);
    }
    await proxy.publishCertificates(wild.map((d) => d.domain));
    const routes = [
      route({ serviceId: 1, pathLocation: '/' }),
      route({ serviceId: 7, domain: '*.apps.test', pathLocation: '/' }),
      // A name with routes of its own below the wildcard: its own (blocked here) win over the wildcard's.
      route({ serviceId: 8, domain: 'own.apps.test', pathLocation: '/', blockedIps: ['127.0.0.0/8'] }),
    ];
    const all = [...domains, ...wild];
    const table = buildRouteTable(routes, all, { reservedHosts: [options.consoleHost] });
    await proxy.syncRoutes(
      table.hosts,
      all.map((d) => d.domain),
    );
    const covered = await https(options.httpsPort, '/x', 'shop.apps.test');
    expect(covered.body).toBe('backend /x host=shop.apps.test auth=undefined');
    expect(covered.fingerprint).toBe(await own('*.apps.test'));
    expect((await https(options.httpsPort, '/x', 'own.apps.test')).status).toBe(403);
    // Another owner's exact domain with no service is not the wildcard's: nothing answers, its own certificate serves.
    const exact = await https(options.httpsPort, '/x', 'mine.apps.test');
    expect(exact.status).toBe(404);
    expect(exact.fingerprint).toBe(await own('mine.apps.test'));
    // One label only, as a certificate's wildcard: not two below, not the apex.
    const deeper = await https(options.httpsPort, '/x', 'a.shop.apps.test');
    expect(deeper.status).toBe(404);
    expect(deeper.fingerprint).toBe(await own(FALLBACK_CERT_NAME));
    expect((await https(options.httpsPort, '/x', 'apps.test')).status).toBe(404);
    // Whatever the wildcard, the console's host stays the console's.
    expect((await https(options.httpsPort, '/y', 'gw.test')).body).toBe('backend /y host=gw.test auth=undefined');
    await serve([route({ serviceId: 1, pathLocation: '/' })]);
    expect((await https(options.httpsPort, '/x', 'shop.apps.test')).status).toBe(404);
    await proxy.unpublishCertificates(wild.map((d) => d.domain));
    for (const { domain } of wild) await rm(pemPath(certsDir, domain), { force: true });
  });

  it('answers ACME challenges on port 80 for any host and redirects everything else to HTTPS', async () => {
    await proxy.setChallenge('tok_123', 'tok_123.thumb');
    expect(
      (await get(`http://127.0.0.1:${options.httpPort}/.well-known/acme-challenge/tok_123`, { host: 'app.test' })).body,
    ).toBe('tok_123.thumb');
    await proxy.removeChallenge('tok_123');
    expect(
      (await get(`http://127.0.0.1:${options.httpPort}/.well-known/acme-challenge/tok_123`, { host: 'app.test' }))
        .status,
    ).toBe(404);
    const redirect = await get(`http://127.0.0.1:${options.httpPort}/a?b=1`, { host: 'app.test' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe(`https://app.test:${options.httpsPort}/a?b=1`);
  });

  it('serves the ACME answers the database holds (every gateway syncs them) and drops those gone', async () => {
    const answer = async (token: string) =>
      get(`http://127.0.0.1:${options.httpPort}/.well-known/acme-challenge/${token}`, { host: 'other.test' });
    await proxy.syncChallenges(
      new Map([
        ['tok_a', 'tok_a.one'],
        ['tok_b', 'tok_b.two'],
      ]),
    );
    expect((await answer('tok_a')).body).toBe('tok_a.one');
    expect((await answer('tok_b')).body).toBe('tok_b.two');
    await proxy.syncChallenges(new Map([['tok_b', 'tok_b.two']]));
    expect((await answer('tok_a')).status).toBe(404);
    expect((await answer('tok_b')).body).toBe('tok_b.two');
    await proxy.syncChallenges(new Map());
    expect((await answer('tok_b')).status).toBe(404);
  });

  it('logs the service and never a token query parameter, in any encoding', async () => {
    await serve([route({ serviceId: 7, pathLocation: '/' })]);
    await https(options.httpsPort, '/s?a=1&%74oken=secret-one&TOKEN=secret-two&b=2&x=1;token=secret-three', 'app.test');
    const log = join(prefixDir, 'logs', 'access-http.log');
    expect(
      await waitFor(
        async () => (await readFile(log, 'utf8')).includes('"/s?a=1&[redacted]&[redacted]&b=2&[redacted]"'),
        3000,
      ),
    ).toBe(true);
    const text = await readFile(log, 'utf8');
    expect(text).not.toMatch(/secret-/);
    expect(text).toMatch(/"svc":"7"/);
  });

  it('cuts exactly the open connections of a service that goes away, at once, and no other', async () => {
    await serve([
      route({ serviceId: 1, pathLocation: '/' }),
      route({ serviceId: 2, domain: 'other.test', pathLocation: '/' }),
    ]);
    const kept = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'other.test');
    const cut = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'app.test');
    const table = await serve([route({ serviceId: 2, domain: 'other.test', pathLocation: '/' })]);
    const started = Date.now();
    expect(await proxy.cutStale(table.revisions)).toBe(1);
    await cut.ended;
    expect(Date.now() - started).toBeLessThan(2000);
    const before = kept.chunks();
    expect(await waitFor(() => kept.chunks() > before + 2, 3000)).toBe(true);
    expect((await https(options.httpsPort, '/', 'app.test')).status).toBe(404);
    kept.close();
  });

  it('counts each service’s requests by status class, bytes and latency, and its open connections', async () => {
    await serve([
      route({ serviceId: 11, domain: 'app.test', pathLocation: '/' }),
      route({ serviceId: 12, domain: 'other.test', pathLocation: '/', blockedIps: ['127.0.0.1'] }),
    ]);
    const before = (await proxy.httpTraffic()).services;
    for (let i = 0; i < 3; i++) await https(options.httpsPort, `/count-${i}`, 'app.test');
    await https(options.httpsPort, '/denied', 'other.test');
    const open = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'app.test');
    const after = (await proxy.httpTraffic()).services;
    const delta = (id: number, pick: (t: HttpTraffic) => number) =>
      pick(after.get(id) as HttpTraffic) - (before.get(id) ? pick(before.get(id) as HttpTraffic) : 0);
    expect(delta(11, (t) => t.requests[1])).toBe(3);
    expect(delta(12, (t) => t.requests[3])).toBe(1);
    expect(delta(11, (t) => t.bytesOut)).toBeGreaterThan(3 * 20);
    expect(delta(11, (t) => t.latencyBuckets.reduce((a, b) => a + b, 0))).toBe(3);
    expect(after.get(11)?.open).toBe(1);
    open.close();
  });

  it('reports what nginx serves that the control plane did not push, and pushing what differs repairs it', async () => {
    const table = await serve([route({ serviceId: 2, domain: 'other.test', pathLocation: '/' })]);
    expect(await proxy.drift(table.hosts, ['app.test', 'other.test'], new Map())).toEqual([]);
    // Someone edits what nginx serves behind the control plane's back.
    const { version } = await instance.control.get<{ version: string }>('/state');
    await instance.control.post('/routes', {
      base: version,
      version: 'by-hand',
      set: { 'rogue.test': '[{"s":99,"r":"x","p":"/","u":"http://127.0.0.1:9"}]' },
      del: ['other.test'],
    });
    expect(await proxy.drift(table.hosts, ['app.test', 'other.test'], new Map())).toEqual([
      'nginx lacks the routes of other.test',
      'nginx routes rogue.test, which the database does not',
    ]);
    proxy.forget();
    await proxy.syncRoutes(table.hosts, ['app.test', 'other.test']);
    expect(await proxy.drift(table.hosts, ['app.test', 'other.test'], new Map())).toEqual([]);
    expect((await https(options.httpsPort, '/', 'rogue.test')).status).toBe(404);
  });

  it('is adopted by a new control plane as it runs: same master, same routes, open connections untouched', async () => {
    await serve([route({ serviceId: 2, domain: 'other.test', pathLocation: '/' })]);
    const open = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'other.test');
    const pid = instance.pid();
    await proxy.stop({ keepServing: true });
    instance = makeInstance();
    proxy = makeProxy(instance);
    await proxy.start();
    expect(instance.pid()).toBe(pid);
    // Before any push: nginx still holds what it held.
    expect((await https(options.httpsPort, '/', 'other.test')).status).toBe(200);
    const before = open.chunks();
    expect(await waitFor(() => open.chunks() > before + 2, 3000)).toBe(true);
    open.close();
  });

  it('closes a client stalled in its TLS handshake after the handshake timeout (nginx 1.22 would wait 60 s)', async () => {
    const stall = (port: number): Promise<boolean> => {
      let isClosed = false;
      const socket = connect({ host: '127.0.0.1', port }, () => {
        // A TLS record header and the ClientHello's type, then nothing (on port 80: a request line never finished).
        socket.write(
          port === options.httpPort ? 'GET / HTTP/1.1\r\n' : Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]),
        );
      });
      socket.on('error', () => undefined);
      socket.on('close', () => (isClosed = true));
      return waitFor(() => isClosed, 20_000, 50);
    };
    const ports = [options.httpsPort, options.noDomainHttpsPort, options.httpPort];
    expect(await Promise.all(ports.map(stall))).toEqual([true, true, true]);
  }, 30_000);

  it('comes back by itself from SIGKILL with the routes it had, before the control plane pushes anything', async () => {
    const table = await serve([
      route({ serviceId: 2, domain: 'other.test', pathLocation: '/' }),
      route({ serviceId: 3, domain: 'app.test', pathLocation: '/' }),
    ]);
    const untouched = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'other.test');
    const disabledLater = await openStream(`https://127.0.0.1:${options.httpsPort}/trickle`, 'app.test');
    // The snapshot a fresh master loads is written just after a push.
    const snapshot = join(prefixDir, 'state', 'routes.json');
    expect(await waitFor(async () => (await readFile(snapshot, 'utf8')).includes('app.test'), 3000)).toBe(true);
    const pid = instance.pid() ?? 0;
    const orphans = (await readChildPids(pid)) ?? [];
    process.kill(pid, 'SIGKILL');
    expect(await waitFor(() => !isAlive(pid), 3000)).toBe(true);
    // The orphaned workers still hold the ports; heal starts a fresh master beside them.
    expect(await instance.heal()).toBe(true);
    expect(instance.pid()).not.toBe(pid);
    expect((await https(options.httpsPort, '/', 'other.test')).status).toBe(200);
    expect((await https(options.httpsPort, '/', 'other.test')).fingerprint).toBe(
      new X509Certificate(await readFile(pemPath(certsDir, 'other.test'), 'utf8')).fingerprint256,
    );
    // The old workers finish what they carry: the open streams keep flowing.
    for (const stream of [untouched, disabledLater]) {
      const before = stream.chunks();
      expect(await waitFor(() => stream.chunks() > before + 2, 3000)).toBe(true);
    }
    // ...and the cut-off still reaches them: a service that goes away loses its stream on the old workers too.
    const left = new Map([...table.revisions].filter(([id]) => id !== 3));
    expect(await proxy.cutStale(left)).toBe(1);
    await disabledLater.ended;
    const before = untouched.chunks();
    expect(await waitFor(() => untouched.chunks() > before + 2, 3000)).toBe(true);
    // Once their last connection ends, they are gone, and the new master alone serves what it loaded from disk.
    untouched.close();
    expect(await waitFor(() => orphans.every((worker) => !isAlive(worker) || isZombie(worker)), 5000)).toBe(true);
    expect((await https(options.httpsPort, '/', 'other.test')).status).toBe(200);
  });
});
