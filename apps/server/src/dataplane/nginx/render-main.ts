import { quotePath } from './syntax.js';
import { DEFAULT_WORKER_SHUTDOWN_TIMEOUT_SECONDS, DEFAULT_WORKER_USER, logsDir, type NginxRenderOptions } from './options.js';

// nginx.conf: process-level settings only. http.conf and stream.conf are included by relative path, which
// nginx resolves against the directory of the `-c` file, so `nginx -t -c <generation>/nginx.conf` tests the
// new generation's includes and the running master (started on `current/nginx.conf`) follows the symlink.
export function renderMainConfig(options: NginxRenderOptions): string {
  const timeout = options.workerShutdownTimeoutSeconds ?? DEFAULT_WORKER_SHUTDOWN_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600) throw new Error(`invalid worker shutdown timeout: ${timeout}`);
  return [
    'load_module /usr/lib/nginx/modules/ngx_stream_module.so;',
    '',
    'daemon off;',
    `user ${options.workerUser ?? DEFAULT_WORKER_USER};`,
    'worker_processes auto;',
    `pid ${quotePath(`${options.prefixDir}/nginx.pid`)};`,
    `error_log ${quotePath(`${logsDir(options)}/error.log`)} warn;`,
    `worker_shutdown_timeout ${timeout}s;`,
    '',
    'events {',
    '    worker_connections 4096;',
    '}',
    '',
    'http {',
    '    include http.conf;',
    '}',
    '',
    'stream {',
    '    include stream.conf;',
    '}',
    '',
  ].join('\n');
}
