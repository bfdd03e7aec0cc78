import { join } from 'node:path';
import type { DesiredStreamRoute } from '../types.js';
import {
  assertHost,
  assertHostname,
  assertIPv4,
  assertIPv4OrCidr,
  assertPort,
  assertPositiveInt,
  isIPv4,
} from '../validate.js';
import {
  DEFAULT_WORKER_USER,
  FALLBACK_CERT_NAME,
  STREAM_ACCESS_LOG,
  logsDir,
  streamRoot,
  type NginxRenderOptions,
} from './options.js';
import { assertFilePath, block, quote, quotePath, renderAccessRules, renderListen } from './syntax.js';

// Each TCP/UDP service is its own small nginx (one master, one worker). A new service starts its instance, a
// disabled or deleted one stops it (which closes exactly its connections, at once), an edit replaces it: nothing
// another service holds is ever touched, and no instance ever needs a reload for a routing change. A renewed TLS
// certificate is picked up by a graceful reload of that one instance (its open sessions keep going).

const LOG_FORMAT = [
  `'{"time":"$time_iso8601","type":"tcp","svc":"$gw_svc","host":"$gw_domain","remote":"$remote_addr",'`,
  `'"proto":"$protocol","status":"$status","rx":"$bytes_received","tx":"$bytes_sent",'`,
  `'"upstream":"$upstream_addr","duration":"$session_time"}'`,
];

/** `tcp-30005`: the instance's directory name and identity (one service per protocol and public port). */
export function streamInstanceKey(route: Pick<DesiredStreamRoute, 'proto' | 'port'>): string {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type says so; this guards the rendered config against any other value
  if (route.proto !== 'tcp' && route.proto !== 'udp')
    throw new Error(`invalid stream protocol: ${String(route.proto)}`);
  return `${route.proto}-${assertPort(route.port, 'public port')}`;
}

export function streamInstanceDir(prefixDir: string, key: string): string {
  if (!/^(tcp|udp)-\d{1,5}$/.test(key)) throw new Error(`invalid stream instance ${JSON.stringify(key)}`);
  return join(streamRoot(prefixDir), key);
}

/** The certificate a TLS-terminating service serves: its domain's, or the gateway's fallback. */
export function streamCertificateName(route: DesiredStreamRoute): string | null {
  if (route.proto !== 'tcp' || !route.ssl) return null;
  return route.domain === null ? FALLBACK_CERT_NAME : assertHostname(route.domain, 'domain');
}

/**
 * One instance's nginx.conf. `backendHost` was already turned into an address when /etc/hosts names it; any
 * other name is resolved per session (`resolver`), so a name that does not resolve fails that service's
 * connections, never the instance's start.
 */
export function renderStreamInstance(route: DesiredStreamRoute, options: NginxRenderOptions): string {
  const key = streamInstanceKey(route);
  const dir = streamInstanceDir(options.prefixDir, key);
  const serviceId = assertPositiveInt(route.serviceId, 'service id');
  const backendHost = assertHost(route.backendHost, 'backend host');
  const upstream = `${backendHost}:${assertPort(route.backendPort, 'backend port')}`;
  const certName = streamCertificateName(route);
  const flags = route.proto === 'udp' ? ['udp'] : certName !== null ? ['ssl'] : [];
  const needsResolver = !isIPv4(backendHost);
  if (needsResolver && options.resolvers.length === 0)
    throw new Error(`backend host ${backendHost} needs a name server, and none is configured (/etc/resolv.conf)`);
  const certFile = certName === null ? null : `${assertFilePath(options.certsDir)}/${certName}.pem`;
  return [
    'load_module /usr/lib/nginx/modules/ngx_stream_module.so;',
    '',
    'daemon off;',
    `user ${options.workerUser ?? DEFAULT_WORKER_USER};`,
    'worker_processes 1;',
    `pid ${quotePath(join(dir, 'nginx.pid'))};`,
    `error_log ${quotePath(join(dir, 'error.log'))} warn;`,
    '',
    ...block('events', ['worker_connections 4096;']),
    '',
    ...block('stream', [
      `log_format gw_stream escape=json ${LOG_FORMAT.join('\n        ')};`,
      `access_log ${quotePath(`${logsDir(options)}/${STREAM_ACCESS_LOG}`)} gw_stream;`,
      ...(needsResolver
        ? [
            `resolver ${options.resolvers.map((r) => assertIPv4(r, 'name server')).join(' ')} valid=30s ipv6=off;`,
            'resolver_timeout 5s;',
          ]
        : []),
      ...block('server', [
        renderListen(options.listenAddress, route.port, flags),
        `set $gw_svc ${serviceId};`,
        `set $gw_domain ${route.domain === null ? '""' : quote(assertHostname(route.domain, 'domain'))};`,
        ...renderAccessRules(route.allowedIps, route.blockedIps, assertIPv4OrCidr),
        // Read by the master (root) at start and on a reload: workers never open key files.
        ...(certFile === null
          ? []
          : [
              `ssl_certificate ${quotePath(certFile)};`,
              `ssl_certificate_key ${quotePath(certFile)};`,
              'ssl_protocols TLSv1.2 TLSv1.3;',
            ]),
        'proxy_connect_timeout 5s;',
        // UDP has no close: a session (and its access-log line) ends after this much silence.
        ...(route.proto === 'udp' ? ['proxy_timeout 60s;'] : []),
        ...(needsResolver
          ? [`set $gw_up ${quote(upstream)};`, 'proxy_pass $gw_up;']
          : [`proxy_pass ${quote(upstream)};`]),
      ]),
    ]),
    '',
  ].join('\n');
}
