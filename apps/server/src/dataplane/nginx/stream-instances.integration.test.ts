import { createSocket } from 'node:dgram';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import {
  createConnection,
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../atomic-write.js';
import { createSelfSignedPem, pemPath } from '../certs/self-signed.js';
import type { DesiredStreamRoute } from '../types.js';
import { canRunNginx, freeLoopbackPorts, silentLogger } from './integration-support.js';
import type { NginxRenderOptions } from './options.js';
import { waitUntil } from '../../lib/wait.js';
import { isAlive } from './process-info.js';
import { renderStreamInstance, streamCertificateName, streamInstanceKey } from './render-stream.js';
import { createStreamInstances, type StreamInstances, type WantedInstance } from './stream-instances.js';

// One real nginx per TCP/UDP service: a change to one never touches another's sessions, a disabled one is cut at
// once, and a restarted control plane adopts what runs.

/** A TCP session that echoes: `send` resolves with the reply; `closed` settles when the gateway hangs up. */
function openSession(
  port: number,
): Promise<{ send: (text: string) => Promise<string>; closed: Promise<void>; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      const send = (text: string) =>
        new Promise<string>((ok, fail) => {
          socket.once('data', (data) => ok(data.toString()));
          socket.once('error', fail);
          socket.write(text);
        });
      resolve({ send, closed, socket });
    });
    socket.once('error', reject);
  });
}

function udpRoundTrip(port: number, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error('udp timeout'));
    }, 2000);
    socket.once('message', (data) => {
      clearTimeout(timer);
      socket.close();
      resolve(data.toString());
    });
    socket.send(message, port, '127.0.0.1');
  });
}

function tlsRoundTrip(port: number, message: string): Promise<{ reply: string; names: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'db.test', rejectUnauthorized: false }, () => {
      const names = socket.getPeerCertificate().subjectaltname ?? '';
      socket.once('data', (data) => {
        resolve({ reply: data.toString(), names });
        socket.end();
      });
      socket.write(message);
    });
    socket.once('error', reject);
  });
}

describe.skipIf(!canRunNginx)('TCP/UDP service instances (real nginx)', () => {
  let dataDir = '';
  let options: NginxRenderOptions;
  let echo: Server;
  let echoPort = 0;
  const udpEcho = createSocket('udp4');
  let udpPort = 0;
  let instances: StreamInstances;
  const ports: number[] = [];

  const route = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => ({
    serviceId: 1,
    nodeId: 1,
    proto: 'tcp',
    port: ports[0] ?? 0,
    ssl: false,
    domain: null,
    backendHost: '127.0.0.1',
    backendPort: echoPort,
    allowedIps: [],
    blockedIps: [],
    ...over,
  });
  const want = (routes: DesiredStreamRoute[]): Map<string, WantedInstance> =>
    new Map(
      routes.map((r) => [
        streamInstanceKey(r),
        { conf: renderStreamInstance(r, options), certName: streamCertificateName(r), port: r.port, proto: r.proto },
      ]),
    );

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'postern-stream-it-'));
    const certsDir = join(dataDir, 'certs');
    await mkdir(certsDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(pemPath(certsDir, 'db.test'), await createSelfSignedPem('db.test'), 0o600);
    echo = createTcpServer((socket) => socket.on('data', (data) => socket.write(`echo:${data.toString()}`)));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as AddressInfo).port;
    udpEcho.on('message', (data, peer) => udpEcho.send(`udp:${data.toString()}`, peer.port, peer.address));
    await new Promise<void>((resolve) => udpEcho.bind(0, '127.0.0.1', resolve));
    udpPort = udpEcho.address().port;
    ports.push(...(await freeLoopbackPorts(3)));
    options = {
      prefixDir: join(dataDir, 'nginx'),
      certsDir,
      listenAddress: '127.0.0.1',
      httpPort: 1,
      httpsPort: 2,
      noDomainHttpsPort: 3,
      consoleHost: 'gw.test',
      consoleUpstream: 'http://127.0.0.1:1',
      tunnelAddress: null,
      resolvers: [],
    };
    instances = createStreamInstances({
      prefixDir: options.prefixDir,
      logger: silentLogger,
      listenAddress: '127.0.0.1',
    });
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
    await instances?.stop({ keepServing: false });
    await new Promise((resolve) => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when beforeAll failed
      echo?.close(resolve);
    });
    udpEcho.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves TCP, UDP and TLS-terminated TCP, each from its own instance', async () => {
    const failures = await instances.sync(
      want([
        route({ serviceId: 1 }),
        route({ serviceId: 2, proto: 'udp', port: ports[0] ?? 0, backendPort: udpPort }),
        route({ serviceId: 3, port: ports[1] ?? 0, ssl: true, domain: 'db.test' }),
      ]),
    );
    expect(failures).toEqual(new Map());
    const session = await openSession(ports[0] ?? 0);
    expect(await session.send('a')).toBe('echo:a');
    session.socket.destroy();
    expect(await udpRoundTrip(ports[0] ?? 0, 'b')).toBe('udp:b');
    expect(await tlsRoundTrip(ports[1] ?? 0, 'c')).toEqual({ reply: 'echo:c', names: 'DNS:db.test' });
    expect([...instances.running().keys()].sort()).toEqual(
      [`tcp-${ports[0]}`, `tcp-${ports[1]}`, `udp-${ports[0]}`].sort(),
    );
  });

  it('adds, edits and removes one service without touching another’s open session; removal cuts at once', async () => {
    await instances.sync(want([route({ serviceId: 1 }), route({ serviceId: 3, port: ports[1] ?? 0 })]));
    const kept = await openSession(ports[0] ?? 0);
    const doomed = await openSession(ports[1] ?? 0);
    expect(await doomed.send('x')).toBe('echo:x');
    // Add a service, edit another, remove a third: the first one's session keeps working throughout.
    await instances.sync(
      want([
        route({ serviceId: 1 }),
        route({ serviceId: 3, port: ports[1] ?? 0, blockedIps: ['10.9.9.9'] }),
        route({ serviceId: 4, port: ports[2] ?? 0 }),
      ]),
    );
    expect(await kept.send('1')).toBe('echo:1');
    const started = Date.now();
    await instances.sync(want([route({ serviceId: 1 })]));
    await doomed.closed;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await kept.send('2')).toBe('echo:2');
    await expect(openSession(ports[1] ?? 0)).rejects.toThrow(/ECONNREFUSED/);
    kept.socket.destroy();
  });

  it("a scoped patch starts, replaces and stops its keys' instances alone: the others keep their master", async () => {
    await instances.sync(want([route({ serviceId: 1 }), route({ serviceId: 3, port: ports[1] ?? 0 })]));
    const kept = await openSession(ports[0] ?? 0);
    const keptPid = instances.running().get(`tcp-${ports[0]}`);
    const moved = `tcp-${ports[1]}`;
    const added = `tcp-${ports[2]}`;
    // Service 3 moves to the third port: its old instance stops, its new one starts; the wanted map also names
    // service 1 (a full plan), which the patch must not look at.
    const failures = await instances.patch(
      want([route({ serviceId: 1, backendPort: 1 }), route({ serviceId: 3, port: ports[2] ?? 0 })]),
      [moved, added],
    );
    expect(failures).toEqual(new Map());
    expect([...instances.running().keys()].sort()).toEqual([`tcp-${ports[0]}`, added].sort());
    expect(instances.running().get(`tcp-${ports[0]}`)).toBe(keptPid);
    expect(await kept.send('p')).toBe('echo:p');
    expect(await (await openSession(ports[2] ?? 0)).send('new')).toBe('echo:new');
    await expect(openSession(ports[1] ?? 0)).rejects.toThrow(/ECONNREFUSED/);
    kept.socket.destroy();
    // The next test needs the third port free.
    await instances.patch(new Map(), [added]);
    expect([...instances.running().keys()]).toEqual([`tcp-${ports[0]}`]);
  });

  it('reports a port another program holds for that service alone', async () => {
    const squatter = createTcpServer();
    await new Promise<void>((resolve) => squatter.listen(ports[2] ?? 0, '127.0.0.1', resolve));
    try {
      const failures = await instances.sync(
        want([route({ serviceId: 1 }), route({ serviceId: 5, port: ports[2] ?? 0 })]),
      );
      expect(failures.get(`tcp-${ports[2]}`)).toMatch(/in use by another program/);
      expect(await (await openSession(ports[0] ?? 0)).send('ok')).toBe('echo:ok');
    } finally {
      await new Promise((resolve) => {
        squatter.close(resolve);
      });
    }
  });

  it('is adopted by a new control plane with its sessions, and a dead instance comes back', async () => {
    await instances.sync(want([route({ serviceId: 1 })]));
    const session = await openSession(ports[0] ?? 0);
    const pid = instances.running().get(`tcp-${ports[0]}`) ?? 0;
    await instances.stop({ keepServing: true });
    instances = createStreamInstances({
      prefixDir: options.prefixDir,
      logger: silentLogger,
      listenAddress: '127.0.0.1',
    });
    await instances.adopt();
    await instances.sync(want([route({ serviceId: 1 })]));
    expect(instances.running().get(`tcp-${ports[0]}`)).toBe(pid);
    expect(await session.send('still')).toBe('echo:still');
    process.kill(pid, 'SIGKILL');
    expect(await waitUntil(() => !isAlive(pid), 3000)).toBe(true);
    expect(await instances.heal()).toEqual([`tcp-${ports[0]}`]);
    expect(await (await openSession(ports[0] ?? 0)).send('back')).toBe('echo:back');
  });
});
