import { createSocket } from 'node:dgram';
import { X509Certificate } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSelfSignedCertificates, createSelfSignedPem, pemPath } from '../certs/self-signed.js';
import { writeFileAtomic } from '../atomic-write.js';
import { createAccessLogSource } from '../logs/log-source.js';
import { NginxRejectedError, type DesiredHttpRoute, type DesiredState, type DesiredStreamRoute, type NginxAdapter } from '../types.js';
import { lookupUser } from '../system-user.js';
import { waitFor } from './process-info.js';
import { createNginxDriver } from './driver.js';
import { renderNginxConfig } from './render.js';
import { canRunNginx, freeLoopbackPort, silentLogger } from './integration-support.js';

// Real nginx on loopback high ports: proves the rendered config routes, rejects and stops as the API promises.


function get(url: string): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, agent: false, timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

function tcpRoundTrip(port: number, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write(message));
    socket.setTimeout(2000, () => socket.destroy(new Error('timeout')));
    socket.once('data', (data) => { resolve(data.toString()); socket.end(); });
    socket.on('error', reject);
  });
}

/** One TLS connection to a stream listener: what it answers and which certificate it showed. */
function tlsRoundTrip(port: number, servername: string, message: string): Promise<{ reply: string; names: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const certificate = socket.getPeerCertificate();
      socket.once('data', (data) => {
        resolve({ reply: data.toString(), names: certificate.subjectaltname ?? '', fingerprint: certificate.fingerprint256 });
        socket.end();
      });
      socket.write(message);
    });
    socket.setTimeout(2000, () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}

function udpRoundTrip(port: number, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => { socket.close(); reject(new Error('udp timeout')); }, 2000);
    socket.once('message', (data) => { clearTimeout(timer); socket.close(); resolve(data.toString()); });
    socket.send(message, port, '127.0.0.1');
  });
}

describe.skipIf(!canRunNginx)('nginx driver against real nginx', () => {
  let dataDir = '';
  let nginx: NginxAdapter;
  let backend: Server;
  let backendPort = 0;
  const closers: (() => Promise<void>)[] = [];
  const ports = { http: 0, https: 0, stream: 0 };
  let render: (state: Pick<DesiredState, 'http' | 'stream' | 'domains'>) => Record<string, string>;

  const route = (over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute => ({
    serviceId: 1, nodeId: 1, domain: null, pathLocation: '/api', backendProto: 'http', backendHost: '127.0.0.1', backendPort,
    allowedIps: [], blockedIps: [], ...over,
  });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-nginx-it-'));
    await chmod(dataDir, 0o711); // nginx workers (www-data) open certificates below it
    const owner = (await lookupUser('www-data')) ?? undefined;
    backend = createHttpServer((req, res) => res.end(`backend ${req.url ?? ''} xff=${String(req.headers['x-forwarded-for'])}`));
    backend.on('upgrade', (req, socket) => {
      socket.end(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Seen-Host: ${String(req.headers.host)}\r\n\r\n`);
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    backendPort = (backend.address() as AddressInfo).port;
    closers.push(() => new Promise((resolve) => { backend.close(() => resolve()); }));
    ports.http = await freeLoopbackPort();
    ports.https = await freeLoopbackPort();
    ports.stream = await freeLoopbackPort();
    const certsDir = join(dataDir, 'certs');
    await createSelfSignedCertificates({ certsDir, fallbackHost: '127.0.0.1', logger: silentLogger, owner }).ensureFallback();
    const prefixDir = join(dataDir, 'nginx');
    render = (state) => renderNginxConfig(state, {
      prefixDir, certsDir, acmeWebroot: join(dataDir, 'acme'), httpPort: ports.http, httpsPort: ports.https, listenAddress: '127.0.0.1',
      workerShutdownTimeoutSeconds: 1,
    });
    nginx = createNginxDriver({ prefixDir, logger: silentLogger });
    await nginx.start();
    closers.push(() => nginx.stop());
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('routes an HTTPS request by path prefix to the backend and redirects plain HTTP', async () => {
    await nginx.apply(render({ http: [route()], stream: [], domains: [] }));
    const ok = await get(`https://127.0.0.1:${ports.https}/api/items?x=1`);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('backend /api/items?x=1 xff=127.0.0.1');
    expect((await get(`https://127.0.0.1:${ports.https}/api`)).status).toBe(200);
    expect((await get(`https://127.0.0.1:${ports.https}/apix`)).status).toBe(404);
    const logs = createAccessLogSource([join(dataDir, 'nginx', 'logs', 'access-http.log')], { batchMs: 10, pollMs: 50 });
    closers.push(() => Promise.resolve(logs.close()));
    const seen: string[] = [];
    logs.subscribe({ type: 'http', id: 1 }, (lines) => seen.push(...lines));
    await get(`https://127.0.0.1:${ports.https}/api/logged`);
    expect(await waitFor(() => seen.some((l) => /^\[INFO\] .*"GET \/api\/logged HTTP\/1.1" 200 /.test(l)), 3000)).toBe(true);
    // An event stream's session token never reaches the log.
    await get(`https://127.0.0.1:${ports.https}/api/stream?a=1&token=s3cret-session&b=2`);
    expect(await waitFor(() => seen.some((l) => l.includes('"GET /api/stream?a=1&token=[redacted]&b=2 HTTP/1.1" 200')), 3000)).toBe(true);
    expect(await readFile(join(dataDir, 'nginx', 'logs', 'access-http.log'), 'utf8')).not.toContain('s3cret-session');
    const redirect = await get(`http://127.0.0.1:${ports.http}/api/items`);
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe(`https://127.0.0.1:${ports.https}/api/items`);
  });

  it('routes by domain with the domain’s own certificate and passes WebSocket upgrades', async () => {
    const certs = createSelfSignedCertificates({ certsDir: join(dataDir, 'certs'), fallbackHost: '127.0.0.1', logger: silentLogger, owner: (await lookupUser('www-data')) ?? undefined });
    const domain = { domainId: 7, domain: 'app.postern.test', ssl: 'self-signed' as const };
    await certs.ensure(domain);
    await nginx.apply(render({ http: [route(), route({ serviceId: 2, domain: domain.domain, pathLocation: '/' })], stream: [], domains: [domain] }));

    const reply = await new Promise<{ subject: string; head: string }>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: ports.https, servername: domain.domain, rejectUnauthorized: false }, () => {
        socket.write(`GET /chat HTTP/1.1\r\nHost: ${domain.domain}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
      });
      socket.setTimeout(2000, () => socket.destroy(new Error('timeout')));
      socket.once('data', (data) => {
        resolve({ subject: String(socket.getPeerCertificate().subject.CN), head: data.toString() });
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(reply.subject).toBe(domain.domain);
    expect(reply.head).toMatch(/^HTTP\/1.1 101 /);
    expect(reply.head).toContain(`X-Seen-Host: ${domain.domain}`);
  });

  it('reports a rejected generation and keeps serving the previous one', async () => {
    const files = render({ http: [route()], stream: [], domains: [] });
    const broken = { ...files, 'http.conf': `${files['http.conf'] ?? ''}\nno_such_directive on;\n` };
    const rejection = nginx.apply(broken);
    await expect(rejection).rejects.toBeInstanceOf(NginxRejectedError);
    await expect(rejection).rejects.toThrow('unknown directive "no_such_directive"');
    expect((await get(`https://127.0.0.1:${ports.https}/api/x`)).status).toBe(200);
  });

  it('reports a port nginx cannot bind at reload and keeps the old config serving', async () => {
    const squatter = createTcpServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => { squatter.close(() => resolve()); }));
    const taken = (squatter.address() as AddressInfo).port;
    const stream: DesiredStreamRoute = {
      serviceId: 9, nodeId: 1, proto: 'tcp', port: taken, ssl: false, domain: null, backendHost: '127.0.0.1', backendPort,
      allowedIps: [], blockedIps: [],
    };
    const rejection = nginx.apply(render({ http: [route()], stream: [stream], domains: [] }));
    await expect(rejection).rejects.toThrow('Address already in use');
    expect((await get(`https://127.0.0.1:${ports.https}/api/x`)).status).toBe(200);
  });

  it('enforces blocked IPs and stops answering once the route is removed', async () => {
    await nginx.apply(render({ http: [route({ blockedIps: ['127.0.0.1'] })], stream: [], domains: [] }));
    expect((await get(`https://127.0.0.1:${ports.https}/api/x`)).status).toBe(403);
    await nginx.apply(render({ http: [], stream: [], domains: [] }));
    expect((await get(`https://127.0.0.1:${ports.https}/api/x`)).status).toBe(404);
  });

  it('serves TCP and UDP on the same public port', async () => {
    const tcp = createTcpServer((socket) => socket.on('data', (data) => socket.write(`tcp:${data.toString()}`)));
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => { tcp.close(() => resolve()); }));
    const udp = createSocket('udp4');
    udp.on('message', (data, from) => udp.send(`udp:${data.toString()}`, from.port, from.address));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => { udp.close(() => resolve()); }));
    const stream = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => ({
      serviceId: 5, nodeId: 1, proto: 'tcp', port: ports.stream, ssl: false, domain: null, backendHost: '127.0.0.1',
      backendPort: (tcp.address() as AddressInfo).port, allowedIps: [], blockedIps: [], ...over,
    });
    await nginx.apply(render({ http: [], domains: [], stream: [
      stream({}),
      stream({ serviceId: 6, proto: 'udp', backendPort: udp.address().port }),
    ] }));
    expect(await tcpRoundTrip(ports.stream, 'ping')).toBe('tcp:ping');
    expect(await udpRoundTrip(ports.stream, 'ping')).toBe('udp:ping');
  });

  it('terminates TLS for a TCP service with its domain certificate, and serves a renewed one without a reload', async () => {
    const echo = createTcpServer((socket) => socket.on('data', (data) => socket.write(`tcp:${data.toString()}`)));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => { echo.close(() => resolve()); }));
    const owner = (await lookupUser('www-data')) ?? undefined;
    const certsDir = join(dataDir, 'certs');
    const domain = { domainId: 9, domain: 'db.postern.test', ssl: 'self-signed' as const };
    await createSelfSignedCertificates({ certsDir, fallbackHost: '127.0.0.1', logger: silentLogger, owner }).ensure(domain);
    const tlsPort = await freeLoopbackPort();
    const stream = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => ({
      serviceId: 5, nodeId: 1, proto: 'tcp', port: ports.stream, ssl: false, domain: null, backendHost: '127.0.0.1',
      backendPort: (echo.address() as AddressInfo).port, allowedIps: [], blockedIps: [], ...over,
    });
    await nginx.apply(render({ http: [], domains: [domain], stream: [stream({}), stream({ serviceId: 8, port: tlsPort, ssl: true, domain: domain.domain })] }));

    const first = await tlsRoundTrip(tlsPort, domain.domain, 'hello');
    expect(first.reply).toBe('tcp:hello');
    expect(first.names).toContain('DNS:db.postern.test');
    // A renewal, as the certificate manager writes it: one combined PEM replaced by rename, no apply.
    const renewed = await createSelfSignedPem(domain.domain);
    await writeFileAtomic(pemPath(certsDir, domain.domain), renewed, 0o600, owner);
    const second = await tlsRoundTrip(tlsPort, domain.domain, 'again');
    expect(second.reply).toBe('tcp:again');
    expect(second.fingerprint).toBe(new X509Certificate(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/.exec(renewed)?.[0] ?? '').fingerprint256);
    expect(second.fingerprint).not.toBe(first.fingerprint);
  });

  it('restarts nginx when it dies', { timeout: 10_000 }, async () => {
    const pid = Number(await readFile(join(dataDir, 'nginx', 'nginx.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const isBack = await waitFor(async () => {
      const text = await readFile(join(dataDir, 'nginx', 'nginx.pid'), 'utf8').catch(() => '');
      return Number(text) !== pid && Number(text) > 0 && (await tcpRoundTrip(ports.stream, 'x').catch(() => '')) === 'tcp:x';
    }, 5000, 50);
    expect(isBack).toBe(true);
  });
});
