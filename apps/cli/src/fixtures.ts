import { execFile } from 'node:child_process';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { formatPat, type AgentGateway, type Node } from '@postern/contract';

// Shared test data (used by *.test.ts only): a gateway-shaped WireGuard config, a node, valid tokens, a
// self-signed certificate, and a tiny HTTP(S) server on 127.0.0.1 that answers like the agent API.

export const NODE_PRIVATE_KEY = 'OKPFPfCRWwswrjHpyvRkvRK+ENIsditZhQr1t7fqxGs=';
export const GATEWAY_PUBLIC_KEY = 'yQ4PQxeTJrDa0Amr/wjC9S6ljOr7X7C2lv1YRJJbzAo=';
export const OTHER_PRIVATE_KEY = 'MAJU2M7E1Gkmu4I4XYLChIWOXoWGdjn1OPfpmEuZzWc=';
export const PRESHARED_KEY = 's1ZlvlGeHAWo1s3RMxkbK4bdi07JlWPzFwSxw9FYqFc=';

/** The shape the gateway's renderer produces (apps/server dataplane/wireguard/render.ts). */
export function nodeConfigText(overrides: { privateKey?: string; address?: string; allowedIps?: string } = {}): string {
  return [
    '[Interface]',
    `Address = ${overrides.address ?? '10.8.0.2'}/32`,
    `PrivateKey = ${overrides.privateKey ?? NODE_PRIVATE_KEY}`,
    '',
    '[Peer]',
    `PublicKey = ${GATEWAY_PUBLIC_KEY}`,
    `PresharedKey = ${PRESHARED_KEY}`,
    'Endpoint = gw.example.com:51820',
    `AllowedIPs = ${overrides.allowedIps ?? '10.8.0.0/24'}`,
    'PersistentKeepalive = 25',
    '',
  ].join('\n');
}

/**
 * Three gateways on one database (docs/SCALE-OUT.md), in the order the gateway lists them; the first is the legacy one.
 */
export const GATEWAYS: AgentGateway[] = [
  { name: 'gw-a', publicKey: GATEWAY_PUBLIC_KEY, endpoint: 'gw-a.example.com:51820', address: '10.8.0.1' },
  {
    name: 'gw-b',
    publicKey: 'YRb2fm6KqzOd7rpO7+rjETRU9J3bmH3QTlsnCypVCm8=',
    endpoint: 'gw-b.example.com:51820',
    address: '10.8.0.254',
  },
  {
    name: 'gw-c',
    publicKey: '1yvbhCzPn7J/utKPO5rVQvJ49tsactkLGIIEl0H0VH4=',
    endpoint: 'gw-c.example.com:51820',
    address: '10.8.0.253',
  },
].map((gateway) => ({ ...gateway, tunnelHealthUrl: `http://${gateway.address}:80/_postern/tunnel-health` }));

/**
 * What the gateway renders for several gateways (ISSUE16-DESIGN): one [Peer] each, its own /32 first, the wide
 * routes (the VPN subnet, or 0.0.0.0/0 with `allowInternet`) on the first peer only.
 */
export function multiGatewayConfigText(
  options: { gateways?: AgentGateway[]; allowInternet?: boolean; privateKey?: string } = {},
): string {
  const gateways = options.gateways ?? GATEWAYS;
  return [
    '[Interface]',
    'Address = 10.8.0.2/32',
    `PrivateKey = ${options.privateKey ?? NODE_PRIVATE_KEY}`,
    ...gateways.flatMap((gateway, index) => [
      '',
      '[Peer]',
      `PublicKey = ${gateway.publicKey}`,
      `PresharedKey = ${PRESHARED_KEY}`,
      `Endpoint = ${gateway.endpoint}`,
      `AllowedIPs = ${[`${gateway.address}/32`, ...(index === 0 ? [options.allowInternet ? '0.0.0.0/0' : '10.8.0.0/24'] : [])].join(', ')}`,
      'PersistentKeepalive = 25',
    ]),
    '',
  ].join('\n');
}

export function makeToken(): string {
  return formatPat(randomBytes(36));
}

export function makeNode(overrides: Partial<Node> = {}): Node {
  return {
    id: 1,
    name: 'pi-at-home',
    address: '10.8.0.2',
    allowInternet: false,
    isGateway: false,
    gatewayNetwork: null,
    gatewayNetworks: [],
    isLocal: false,
    enabled: true,
    status: 'offline',
    clientIp: null,
    latestHandshakeTimestamp: null,
    transferRx: 0,
    transferTx: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

export interface RecordedRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Handler = (request: RecordedRequest) => { status: number; body?: unknown; headers?: Record<string, string> };

export interface TestCertificate {
  /** Key and certificate PEM, as an HTTPS server takes them. */
  key: string;
  cert: string;
  /** The pin computed here from openssl's output, independently of the CLI's pin.ts. */
  pin: string;
}

/**
 * A self-signed ECDSA certificate made by openssl for `name` (CN), with `altNames` as subjectAltName
 * (e.g. 'IP:127.0.0.1'); without altNames it names no address, so only a pin can make 127.0.0.1 accept it.
 */
export async function makeCertificate(name: string, altNames?: string): Promise<TestCertificate> {
  const dir = await mkdtemp(path.join(tmpdir(), 'postern-cli-cert-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      ...(altNames === undefined ? [] : ['-addext', `subjectAltName=${altNames}`]),
    ]);
    const cert = await readFile(certFile, 'utf8');
    const spki = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
    return {
      key: await readFile(keyFile, 'utf8'),
      cert,
      pin: `sha256:${createHash('sha256').update(spki).digest('base64')}`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Like the gateway's agent API; with `certificate` over HTTPS (the URL then starts with https://127.0.0.1). */
export async function startAgentServer(handler: Handler, certificate?: TestCertificate): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body };
      requests.push(recorded);
      const answer = handler(recorded);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  };
  const server =
    certificate === undefined
      ? createServer(onRequest)
      : createHttpsServer({ key: certificate.key, cert: certificate.cert }, onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${certificate === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port nobody listens on: bind, read the port, close. */
export async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
