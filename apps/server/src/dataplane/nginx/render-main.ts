import type { ConfigFiles } from '../types.js';
import {
  DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
  DEFAULT_WORKER_CONNECTIONS,
  DEFAULT_WORKER_USER,
  FALLBACK_CERT_NAME,
  HTTP_ACCESS_LOG,
  accessSnapshotFile,
  controlSocket,
  logsDir,
  snapshotFile,
  validateRenderOptions,
  type NginxRenderOptions,
} from './options.js';
import { readAccessLuaModule } from './lua-source.js';
import { DEFAULT_DICT_LIMITS, renderDicts, type DictSizes } from './dict-sizes.js';
import { openFilesFor } from './sizing.js';
import { assertFilePath, block, quotePath, renderListen } from './syntax.js';

// The HTTP instance: ONE nginx serving every HTTP service, the console and ACME answers. It holds no service in its
// config: routes, access lists, certificates and ACME answers are data in Lua shared dictionaries (lua/postern.lua),
// pushed over the control socket. So this config changes only with the gateway's own settings (ports, public host),
// never with a service, and no service change reloads nginx.

const LOG_FORMAT = [
  `'{"time":"$time_iso8601","type":"http","svc":"$gw_svc","host":"$host","remote":"$remote_addr",'`,
  `'"method":"$request_method","uri":"$gw_log_uri","proto":"$server_protocol","status":"$status",'`,
  `'"bytes":"$body_bytes_sent","upstream_status":"$upstream_status","rt":"$request_time","ua":"$http_user_agent"}'`,
];

const LUA_MODULE_FILE = 'postern.lua';
const ACCESS_LUA_MODULE_FILE = 'postern_access.lua';

/** Options handed to the Lua module's init(): JSON inside a Lua long string (every value is allow-listed). */
function luaOptions(options: NginxRenderOptions): string {
  const json = JSON.stringify({
    snapshot: assertFilePath(snapshotFile(options.prefixDir)),
    access_snapshot: assertFilePath(accessSnapshotFile(options.prefixDir)),
    certs_dir: assertFilePath(options.certsDir),
    console_host: options.consoleHost,
    console_upstream: options.consoleUpstream,
    no_domain_port: options.noDomainHttpsPort,
    https_port: options.httpsPort,
    tunnel_address: options.tunnelAddress,
    count_traffic: options.countTraffic ?? true,
  });
  if (json.includes(']==]')) throw new Error('refusing Lua options that would end their string');
  return `[==[${json}]==]`;
}

/**
 * Who may reach a service (docs/ACCESS.md): identity headers only ever set by nginx after a passed check (a client's
 * are replaced or, when the variable is empty, dropped: proxy_set_header wins over any case of the name).
 */
const IDENTITY_HEADERS = [
  'proxy_set_header X-Postern-User $gw_access_user;',
  'proxy_set_header X-Postern-Email $gw_access_email;',
  'proxy_set_header X-Postern-Groups $gw_access_groups;',
];

/**
 * The files of one generation of the HTTP instance: nginx.conf and the Lua modules beside it, so config and code
 * switch together. `generationDir` is where they will live (the Lua modules are loaded from there). `dicts`: the
 * shared dictionaries' sizes, from the data they hold (dict-sizes.ts; growing one is a new generation).
 */
export function renderHttpInstance(
  options: NginxRenderOptions,
  generationDir: string,
  luaSource: string,
  dicts: DictSizes = DEFAULT_DICT_LIMITS.floors,
  accessLuaSource: string = readAccessLuaModule(),
): ConfigFiles {
  validateRenderOptions(options);
  const fallback = `${assertFilePath(options.certsDir)}/${FALLBACK_CERT_NAME}.pem`;
  const resolver =
    options.resolvers.length > 0
      ? [`resolver ${options.resolvers.join(' ')} valid=30s ipv6=off;`, 'resolver_timeout 5s;']
      : [];
  const workerConnections = options.workerConnections ?? DEFAULT_WORKER_CONNECTIONS;
  const openFiles = options.workerOpenFiles ?? openFilesFor(workerConnections, null);
  const handshakeTimeout = options.handshakeTimeoutSeconds ?? DEFAULT_HANDSHAKE_TIMEOUT_SECONDS;
  const conf = [
    'load_module /usr/lib/nginx/modules/ndk_http_module.so;',
    'load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;',
    '',
    'daemon off;',
    `user ${options.workerUser ?? DEFAULT_WORKER_USER};`,
    'worker_processes auto;',
    // One file per connection and then some: a worker at its file limit stops accepting, whatever its slots.
    `worker_rlimit_nofile ${openFiles};`,
    `pid ${quotePath(`${options.prefixDir}/nginx.pid`)};`,
    `error_log ${quotePath(`${logsDir(options)}/error.log`)} warn;`,
    // No worker_shutdown_timeout: a reload (only for the gateway's own settings or an upgrade) must not cut anyone's
    // connections; a disabled service's connections are cut precisely instead (dataplane/connections.ts).
    '',
    // Sized to the machine (nginx/sizing.ts); one address cannot fill them (per-address limits: listener-limits.ts).
    ...block('events', [`worker_connections ${workerConnections};`]),
    '',
    ...block('http', [
      'include /etc/nginx/mime.types;',
      'default_type application/octet-stream;',
      `client_body_temp_path ${quotePath(`${options.prefixDir}/temp/client_body`)};`,
      `proxy_temp_path ${quotePath(`${options.prefixDir}/temp/proxy`)};`,
      `fastcgi_temp_path ${quotePath(`${options.prefixDir}/temp/fastcgi`)};`,
      `uwsgi_temp_path ${quotePath(`${options.prefixDir}/temp/uwsgi`)};`,
      `scgi_temp_path ${quotePath(`${options.prefixDir}/temp/scgi`)};`,
      'server_tokens off;',
      // In nginx 1.22 this one timer bounds the TLS handshake too (there is no ssl_handshake_timeout yet), then the
      // request line and headers: a client that stalls there holds a connection this long, not nginx's 60 s.
      `client_header_timeout ${handshakeTimeout}s;`,
      // A timed-out client is reset, so its socket's memory is freed now rather than after a FIN handshake.
      'reset_timedout_connection on;',
      'client_max_body_size 0;',
      // Bodies pass through as they arrive: workers never spool to disk (they may not be able to reach the data dir).
      'proxy_request_buffering off;',
      ...resolver,
      '',
      `lua_package_path "${assertFilePath(generationDir)}/?.lua;/usr/share/lua/5.1/?.lua;;";`,
      ...renderDicts(dicts),
      `init_by_lua_block { require("postern").init(${luaOptions(options)}) }`,
      '',
      `log_format gw_http escape=json ${LOG_FORMAT.join('\n        ')};`,
      `access_log ${quotePath(`${logsDir(options)}/${HTTP_ACCESS_LOG}`)} gw_http;`,
      '',
      ...block('map $http_upgrade $gw_connection', ['default upgrade;', "'' close;"]),
      '',
      ...block('server', [
        // reuseport: a master that replaces a killed one binds beside its orphaned workers, which finish their
        // connections (http-instance.ts `startFresh`).
        renderListen(options.listenAddress, options.httpPort, ['default_server', 'reuseport']),
        'set $gw_svc "";',
        'set $gw_log_uri "";',
        ...block('location /', ['content_by_lua_block { require("postern").plain() }']),
      ]),
      '',
      ...block('server', [
        renderListen(options.listenAddress, options.httpsPort, ['ssl', 'default_server', 'reuseport']),
        renderListen(options.listenAddress, options.noDomainHttpsPort, ['ssl', 'default_server', 'reuseport']),
        // Until the control plane pushes certificates, and for clients that send no name: the fallback.
        `ssl_certificate ${quotePath(fallback)};`,
        `ssl_certificate_key ${quotePath(fallback)};`,
        'ssl_certificate_by_lua_block { require("postern").certificate() }',
        'ssl_protocols TLSv1.2 TLSv1.3;',
        'ssl_session_cache shared:gw_tls:10m;',
        'ssl_session_timeout 1h;',
        'set $gw_svc "";',
        'set $gw_up "";',
        'set $gw_path "";',
        'set $gw_log_uri "";',
        'set $gw_access_user "";',
        'set $gw_access_email "";',
        'set $gw_access_groups "";',
        // The sign-in exchange of protected services, on every host: the control plane answers it (docs/ACCESS.md).
        ...block('location /_postern/access/', [
          'access_by_lua_block { require("postern_access").exchange() }',
          'proxy_pass $gw_up$request_uri;',
          'proxy_http_version 1.1;',
          'proxy_set_header Host $host;',
          'proxy_set_header X-Forwarded-For $remote_addr;',
          'proxy_set_header X-Forwarded-Proto $scheme;',
          ...IDENTITY_HEADERS,
        ]),
        ...block('location /', [
          'access_by_lua_block { require("postern").route() }',
          // The console's session cookie never comes from a backend on the no-domain port (lua/postern.lua).
          'header_filter_by_lua_block { require("postern").headers() }',
          // The path the Lua module matched (its canonical form, with the query as sent), never the raw one: what the
          // backend reads is what the route and its access list were chosen for.
          'proxy_pass $gw_up$gw_path;',
          'proxy_http_version 1.1;',
          'proxy_set_header Host $host;',
          'proxy_set_header X-Real-IP $remote_addr;',
          'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
          'proxy_set_header X-Forwarded-Proto $scheme;',
          'proxy_set_header X-Forwarded-Host $host;',
          'proxy_set_header Upgrade $http_upgrade;',
          'proxy_set_header Connection $gw_connection;',
          ...IDENTITY_HEADERS,
          'proxy_read_timeout 1h;',
          // Responses pass on as they arrive: event streams and long polls never wait for a buffer to fill.
          'proxy_buffering off;',
          // ...in reads of up to 32 KiB rather than one page: with 4 KiB reads and TLS records a download through the
          // gateway ran at 0.78 of a bare tunnel, with 32 KiB at 0.94-0.96 (bench/throughput.ts). Streams still pass
          // each chunk at once; proxy_buffers only satisfies nginx's check that busy buffers fit in them.
          'proxy_buffer_size 32k;',
          'proxy_buffers 4 32k;',
          'log_by_lua_block { require("postern").done() }',
        ]),
      ]),
      '',
      ...block('server', [
        `listen unix:${assertFilePath(controlSocket(options.prefixDir))};`,
        'access_log off;',
        // Pushes are kept in memory (a full route table at 10,000 services is ~2 MB): no temp files.
        'client_body_buffer_size 64m;',
        'client_max_body_size 64m;',
        ...block('location /', ['content_by_lua_block { require("postern").control() }']),
      ]),
    ]),
    '',
  ].join('\n');
  return { 'nginx.conf': conf, [LUA_MODULE_FILE]: luaSource, [ACCESS_LUA_MODULE_FILE]: accessLuaSource };
}
