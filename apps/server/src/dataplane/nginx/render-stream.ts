import type { DesiredStreamRoute } from '../types.js';
import { assertHost, assertHostname, assertIPv4OrCidr, assertPort, assertPositiveInt } from '../validate.js';
import { FALLBACK_CERT_NAME, STREAM_ACCESS_LOG, logsDir, type NginxRenderOptions } from './options.js';
import { assertFilePath, block, quote, quotePath, renderAccessRules, renderListen } from './syntax.js';

// Stream (TCP/UDP) services: one `server` per (protocol, port). They need `listen` lines, so they cost a reload,
// but their number is bounded by the port range; they live in their own small file.

const LOG_FORMAT = [
  `'{"time":"$time_iso8601","type":"tcp","svc":"$gw_svc","host":"$gw_domain","remote":"$remote_addr",'`,
  `'"proto":"$protocol","status":"$status","rx":"$bytes_received","tx":"$bytes_sent",'`,
  `'"upstream":"$upstream_addr","duration":"$session_time"}'`,
];

function renderStreamServer(route: DesiredStreamRoute, options: NginxRenderOptions): string[] {
  if (route.proto !== 'tcp' && route.proto !== 'udp') throw new Error(`invalid stream protocol: ${String(route.proto)}`);
  const isTls = route.proto === 'tcp' && route.ssl;
  const flags = route.proto === 'udp' ? ['udp'] : isTls ? ['ssl'] : [];
  // By variable, so nginx reads the PEM per handshake and a renewal (an atomic rename) needs no reload.
  const certFile = `${assertFilePath(options.certsDir)}/$gw_stream_cert.pem`;
  return block('server', [
    renderListen(options.listenAddress, assertPort(route.port, 'public port'), flags),
    ...renderAccessRules(route.allowedIps, route.blockedIps, assertIPv4OrCidr),
    ...(isTls ? [`ssl_certificate "${certFile}";`, `ssl_certificate_key "${certFile}";`] : []),
    // UDP has no close: a session (and its access-log line) ends after this much silence.
    ...(route.proto === 'udp' ? ['proxy_timeout 60s;'] : []),
    `proxy_pass ${quote(`${assertHost(route.backendHost, 'backend host')}:${assertPort(route.backendPort, 'backend port')}`)};`,
  ]);
}

const listenerKey = (route: DesiredStreamRoute): string => `${route.proto.toUpperCase()}:${assertPort(route.port, 'public port')}`;

export function renderStreamConfig(routes: DesiredStreamRoute[], options: NginxRenderOptions): string {
  const sorted = [...routes].sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto));
  // The service identity for the access log comes from the listener: maps are defined even with no server.
  return [
    ...block('map $protocol:$server_port $gw_svc', ['default "";', ...sorted.map((r) => `${listenerKey(r)} ${assertPositiveInt(r.serviceId, 'service id')};`)]),
    '',
    ...block('map $protocol:$server_port $gw_domain', ['default "";', ...sorted.flatMap((r) => (r.domain === null ? [] : [`${listenerKey(r)} ${quote(assertHostname(r.domain, 'domain'))};`]))]),
    '',
    ...block('map $protocol:$server_port $gw_stream_cert', [
      `default ${FALLBACK_CERT_NAME};`,
      ...sorted.flatMap((r) => (r.proto === 'tcp' && r.ssl && r.domain !== null ? [`${listenerKey(r)} ${quote(assertHostname(r.domain, 'domain'))};`] : [])),
    ]),
    '',
    `log_format gw_stream escape=json ${LOG_FORMAT.join('\n    ')};`,
    `access_log ${quotePath(`${logsDir(options)}/${STREAM_ACCESS_LOG}`)} gw_stream;`,
    'proxy_connect_timeout 5s;',
    ...sorted.flatMap((route) => ['', ...renderStreamServer(route, options)]),
    '',
  ].join('\n');
}
