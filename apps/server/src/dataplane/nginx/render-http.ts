import type { DesiredDomain, DesiredHttpRoute } from '../types.js';
import { assertHost, assertHostname, assertIPv4OrCidr, assertPathPrefix, assertPort, assertPositiveInt, isHostname, isIPv4 } from '../validate.js';
import { FALLBACK_CERT_NAME, HTTP_ACCESS_LOG, OVERLAY_CONF_FILE, logsDir, overlayRouterSocket, type NginxRenderOptions } from './options.js';
import { assertFilePath, block, compareLocations, quote, quotePath, renderAccessRules, renderListen } from './syntax.js';

// The "C2t" shape (docs/NGINX-SHAPES.md): ONE TLS server for every domain. `map $host` gives a stable domain id,
// a server-level rewrite moves the request into that domain's internal locations (`/_gw/<id><prefix>`), which
// carry the service's allow/deny and upstream, then `try_files` hands over to ONE shared `@gw_proxy`.
// A change costs one small `nginx -t` even at 10,000 domains, and no location has a literal proxy_pass.

export const DEFAULT_HOST_ID = 0;

/** Zero-padded so the lexicographic order of locations follows the id. */
export function formatDomainId(id: number): string {
  return String(assertPositiveInt(id, 'domain id')).padStart(6, '0');
}

/** A DNS name as the certificate files are named (lower case, no `/`, no `..`, not an IP), captured as $gw_sni. */
const SNI_FILE_RE = '~^(?![0-9.]+$)(?<gw_sni>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)$';

/** A `token` query parameter (the first one), split around its value. */
const TOKEN_QUERY_RE = '~^(?<gw_lu1>[^?]*\\?(?:[^#]*?&)?token=)[^&#]*(?<gw_lu2>.*)$';

/** The overlay router's subrequest (internal: a client asking for it gets 404). */
const ROUTER_PATH = '/_gw_overlay_route';
const NOT_ROUTER_RE = `^(?!${ROUTER_PATH}$)`;

const LOG_FORMAT = [
  `'{"time":"$time_iso8601","type":"http","svc":"$gw_svc","host":"$host","remote":"$remote_addr",'`,
  `'"method":"$request_method","uri":"$gw_log_uri","proto":"$server_protocol","status":"$status",'`,
  `'"bytes":"$body_bytes_sent","upstream_status":"$upstream_status","rt":"$request_time","ua":"$http_user_agent"}'`,
];

interface Location {
  path: string;
  exact: boolean;
  body: string[];
}

function nextPowerOfTwo(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(n, 1)));
}

export function upstreamName(route: DesiredHttpRoute): string {
  return `gw_be_${assertPositiveInt(route.serviceId, 'service id')}`;
}

/** A host-name backend's `host:port` for its named upstream; null for an IP literal (no upstream block). */
export function upstreamTarget(route: DesiredHttpRoute): string | null {
  const host = assertHost(route.backendHost, 'backend host');
  return isIPv4(host) ? null : `${host}:${assertPort(route.backendPort, 'backend port')}`;
}

/** Host names need a named upstream (resolved at load); IP literals go straight into the variable. */
export function upstreamUrl(route: DesiredHttpRoute): string {
  const host = assertHost(route.backendHost, 'backend host');
  const port = assertPort(route.backendPort, 'backend port');
  if (route.backendProto !== 'http' && route.backendProto !== 'https') throw new Error(`invalid backend protocol: ${String(route.backendProto)}`);
  return isIPv4(host) ? `${route.backendProto}://${host}:${port}` : `${route.backendProto}://${upstreamName(route)}`;
}

function renderRouteLocations(route: DesiredHttpRoute, domainId: string): Location[] {
  const prefix = assertPathPrefix(route.pathLocation, 'path').replace(/\/+$/, '');
  const body = [
    'internal;',
    ...renderAccessRules(route.allowedIps, route.blockedIps, assertIPv4OrCidr),
    `set $gw_svc ${assertPositiveInt(route.serviceId, 'service id')};`,
    `set $gw_up ${quote(upstreamUrl(route))};`,
    'try_files /.nofile @gw_proxy;',
  ];
  // `/api` must match `/api` and `/api/…` but not `/apix`: an exact location plus a `/`-terminated prefix.
  const base = `/_gw/${domainId}${prefix}`;
  return [
    ...(prefix === '' ? [] : [{ path: base, exact: true, body }]),
    { path: `${base}/`, exact: false, body },
  ];
}

function renderLocation(location: Location): string[] {
  return block(`location ${location.exact ? '=' : '^~'} ${location.path}`, location.body);
}

export function renderHttpConfig(routes: DesiredHttpRoute[], domains: DesiredDomain[], options: NginxRenderOptions): string {
  const idByDomain = new Map(domains.map((d) => [assertHostname(d.domain, 'domain'), formatDomainId(d.domainId)]));
  const locations = routes.flatMap((route) => {
    const id = route.domain === null ? formatDomainId(DEFAULT_HOST_ID) : idByDomain.get(route.domain);
    if (id === undefined) throw new Error(`service ${route.serviceId} uses domain ${JSON.stringify(route.domain)} that has no domain entry`);
    return renderRouteLocations(route, id);
  });
  locations.sort(compareLocations);
  const upstreams = routes.filter((r) => !isIPv4(r.backendHost)).flatMap((route) => [
    ...block(`upstream ${upstreamName(route)}`, [`server ${quote(`${route.backendHost}:${route.backendPort}`)};`]),
    '',
  ]);
  const sortedDomains = [...domains].sort((a, b) => a.domainId - b.domainId);
  // The gateway's own name (when it is one, and not a domain) gets the fallback certificate by name.
  const defaultHostName = options.defaultHostName !== undefined && isHostname(options.defaultHostName) && !idByDomain.has(options.defaultHostName)
    ? options.defaultHostName : null;
  const mapSize = nextPowerOfTwo(Math.max(1024, domains.length * 2));
  const logFile = `${logsDir(options)}/${HTTP_ACCESS_LOG}`;
  const httpsRedirect = options.httpsPort === 443 ? 'https://$host$request_uri' : `https://$host:${options.httpsPort}$request_uri`;

  const lines = [
    'include /etc/nginx/mime.types;',
    'default_type application/octet-stream;',
    `client_body_temp_path ${quotePath(`${options.prefixDir}/temp/client_body`)};`,
    `proxy_temp_path ${quotePath(`${options.prefixDir}/temp/proxy`)};`,
    `fastcgi_temp_path ${quotePath(`${options.prefixDir}/temp/fastcgi`)};`,
    `uwsgi_temp_path ${quotePath(`${options.prefixDir}/temp/uwsgi`)};`,
    `scgi_temp_path ${quotePath(`${options.prefixDir}/temp/scgi`)};`,
    'server_tokens off;',
    'client_max_body_size 0;',
    `map_hash_max_size ${mapSize};`,
    'map_hash_bucket_size 128;',
    '',
    `log_format gw_http escape=json ${LOG_FORMAT.join('\n    ')};`,
    `access_log ${quotePath(logFile)} gw_http;`,
    '',
    // The console's event streams carry the session token in the query (EventSource sends no headers): never log it.
    ...block('map $request_uri $gw_log_uri', ['default $request_uri;', `"${TOKEN_QUERY_RE}" "\${gw_lu1}[redacted]\${gw_lu2}";`]),
    '',
    ...block('map $http_upgrade $gw_connection', ['default upgrade;', "'' close;"]),
    '',
    '# Certificate file by SNI: the explicit list, then a domain added since this generation by its (strict) name.',
    '# An SNI is never used as a path unchecked; one that names no certificate fails the handshake.',
    ...block('map $ssl_server_name $gw_cert', [
      `default ${FALLBACK_CERT_NAME};`,
      `"${SNI_FILE_RE}" $gw_sni;`,
      ...(defaultHostName === null ? [] : [`${defaultHostName} ${FALLBACK_CERT_NAME};`]),
      ...sortedDomains.map((d) => `${d.domain} ${d.domain};`),
    ]),
    '',
    ...block('map $host $gw_dom', [`default ${formatDomainId(DEFAULT_HOST_ID)};`, ...sortedDomains.map((d) => `${d.domain} ${formatDomainId(d.domainId)};`)]),
    '',
    ...upstreams,
    ...block('server', [
      renderListen(options.listenAddress, options.httpPort, ['default_server']),
      'server_name _;',
      'set $gw_svc "";',
      '',
      ...block('location /', [`return 301 ${httpsRedirect};`]),
      '',
      ...block('location ^~ /.well-known/acme-challenge/', [`root ${quotePath(options.acmeWebroot)};`, 'default_type text/plain;', 'try_files $uri =404;']),
    ]),
    '',
    ...block('server', [
      renderListen(options.listenAddress, options.httpsPort, ['ssl', 'default_server']),
      'server_name _;',
      `ssl_certificate "${assertFilePath(options.certsDir)}/$gw_cert.pem";`,
      `ssl_certificate_key "${assertFilePath(options.certsDir)}/$gw_cert.pem";`,
      'ssl_protocols TLSv1.2 TLSv1.3;',
      'ssl_session_cache shared:gw_tls:10m;',
      'ssl_session_timeout 1h;',
      // An empty root: try_files only needs a path that never exists.
      `root ${quotePath(`${options.prefixDir}/empty`)};`,
      '',
      'set $gw_svc "";',
      'set $gw_up "";',
      `include ${OVERLAY_CONF_FILE};`,
      // One stat per request: a host with an overlay file goes to the overlay's router, every other one to the
      // static locations. The router's own subrequest passes through here too and must reach its location.
      ...block('if (-f $gw_ovl)', [`rewrite ${NOT_ROUTER_RE} /_gwo$uri last;`]),
      `rewrite ${NOT_ROUTER_RE} /_gw/$gw_dom$uri last;`,
      '',
      ...block('location /', ['return 404;']),
      ...locations.flatMap(renderLocation),
      // A host in the overlay: the control plane decides (auth_request) and sets $gw_svc and $gw_up, or denies.
      ...block('location ^~ /_gwo/', [
        'internal;',
        `auth_request ${ROUTER_PATH};`,
        'auth_request_set $gw_svc $upstream_http_x_gw_svc;',
        'auth_request_set $gw_up $upstream_http_x_gw_up;',
        'try_files /.nofile @gw_proxy;',
      ]),
      ...block(`location = ${ROUTER_PATH}`, [
        'internal;',
        `proxy_pass http://unix:${assertFilePath(overlayRouterSocket(options))}:/route;`,
        // Only what the router needs: never the client's cookies or credentials.
        'proxy_pass_request_body off;',
        'proxy_pass_request_headers off;',
        'proxy_set_header Content-Length "";',
        'proxy_set_header X-Gw-Host $host;',
        // Raw, as the client sent it: the decoded $uri may hold CR/LF, which would forge headers.
        'proxy_set_header X-Gw-Uri $request_uri;',
        'proxy_set_header X-Gw-Addr $remote_addr;',
        // The router answers from memory in well under a millisecond; a stuck one must not hold requests for a minute.
        'proxy_connect_timeout 2s;',
        'proxy_read_timeout 5s;',
      ]),
      '',
      // try_files runs after the access phase, so each location's allow/deny already applied.
      ...block('location @gw_proxy', [
        // Only the overlay's router leaves it empty: no service on that path.
        ...block('if ($gw_up = "")', ['return 404;']),
        'proxy_pass $gw_up$request_uri;',
        'proxy_http_version 1.1;',
        'proxy_set_header Host $host;',
        'proxy_set_header X-Real-IP $remote_addr;',
        'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        'proxy_set_header X-Forwarded-Proto $scheme;',
        'proxy_set_header X-Forwarded-Host $host;',
        'proxy_set_header Upgrade $http_upgrade;',
        'proxy_set_header Connection $gw_connection;',
        'proxy_read_timeout 1h;',
        // Pass the response on as it arrives: event streams and long polls must not wait for a buffer to fill, and
        // a client slower than its backend is paced by backpressure instead of a spool on the gateway's disk.
        'proxy_buffering off;',
      ]),
    ]),
    '',
  ];
  return lines.join('\n');
}
