import { describe, expect, it } from 'vitest';
import type { DesiredHttpRoute, DesiredStreamRoute } from '../types.js';
import type { NginxRenderOptions } from './options.js';
import { renderHttpConfig } from './render-http.js';
import { renderMainConfig } from './render-main.js';
import { renderStreamConfig } from './render-stream.js';
import { overlayConfFor, renderNginxConfig } from './render.js';

const options: NginxRenderOptions = {
  prefixDir: '/data/nginx', certsDir: '/data/certs', acmeWebroot: '/data/acme', httpPort: 80, httpsPort: 443,
};

const httpRoute = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => ({
  serviceId: 1, nodeId: 1, domain: null, pathLocation: '/', backendProto: 'http', backendHost: '127.0.0.1', backendPort: 3000,
  allowedIps: [], blockedIps: [], ...over,
});

const streamRoute = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => ({
  serviceId: 7, nodeId: 2, proto: 'tcp', port: 20000, ssl: false, domain: null, backendHost: '10.44.0.2', backendPort: 5432,
  allowedIps: [], blockedIps: [], ...over,
});

describe('renderMainConfig', () => {
  it('keeps nginx inside its prefix, in the foreground, with a bounded shutdown', () => {
    expect(renderMainConfig({ ...options, workerShutdownTimeoutSeconds: 5 })).toBe(`load_module /usr/lib/nginx/modules/ngx_stream_module.so;

daemon off;
user www-data;
worker_processes auto;
pid "/data/nginx/nginx.pid";
error_log "/data/nginx/logs/error.log" warn;
worker_shutdown_timeout 5s;

events {
    worker_connections 4096;
}

http {
    include http.conf;
}

stream {
    include stream.conf;
}
`);
  });
});

describe('renderHttpConfig', () => {
  const routes = [
    httpRoute({ serviceId: 1 }),
    httpRoute({ serviceId: 3, domain: 'app.example.com', backendHost: 'localhost', backendPort: 8080 }),
    httpRoute({
      serviceId: 2, domain: 'app.example.com', pathLocation: '/api/', backendProto: 'https', backendHost: '10.44.0.2',
      backendPort: 8443, allowedIps: ['10.0.0.0/8'], blockedIps: ['10.0.0.9'],
    }),
  ];
  const domains = [{ domainId: 12, domain: 'app.example.com', ssl: 'self-signed' as const }];

  it('renders one TLS server that routes by a domain id map into internal per-service locations', () => {
    expect(renderHttpConfig(routes, domains, options)).toMatchInlineSnapshot(`
      "include /etc/nginx/mime.types;
      default_type application/octet-stream;
      client_body_temp_path "/data/nginx/temp/client_body";
      proxy_temp_path "/data/nginx/temp/proxy";
      fastcgi_temp_path "/data/nginx/temp/fastcgi";
      uwsgi_temp_path "/data/nginx/temp/uwsgi";
      scgi_temp_path "/data/nginx/temp/scgi";
      server_tokens off;
      client_max_body_size 0;
      map_hash_max_size 1024;
      map_hash_bucket_size 128;

      log_format gw_http escape=json '{"time":"$time_iso8601","type":"http","svc":"$gw_svc","host":"$host","remote":"$remote_addr",'
          '"method":"$request_method","uri":"$gw_log_uri","proto":"$server_protocol","status":"$status",'
          '"bytes":"$body_bytes_sent","upstream_status":"$upstream_status","rt":"$request_time","ua":"$http_user_agent"}';
      access_log "/data/nginx/logs/access-http.log" gw_http;

      map $request_uri $gw_log_uri {
          default $request_uri;
          "~^(?<gw_lu1>[^?]*\\?(?:[^#]*?&)?token=)[^&#]*(?<gw_lu2>.*)$" "\${gw_lu1}[redacted]\${gw_lu2}";
      }

      map $http_upgrade $gw_connection {
          default upgrade;
          '' close;
      }

      # Certificate file by SNI: the explicit list, then a domain added since this generation by its (strict) name.
      # An SNI is never used as a path unchecked; one that names no certificate fails the handshake.
      map $ssl_server_name $gw_cert {
          default _fallback;
          "~^(?![0-9.]+$)(?<gw_sni>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)$" $gw_sni;
          app.example.com app.example.com;
      }

      map $host $gw_dom {
          default 000000;
          app.example.com 000012;
      }

      upstream gw_be_3 {
          server "localhost:8080";
      }

      server {
          listen 80 default_server;
          server_name _;
          set $gw_svc "";

          location / {
              return 301 https://$host$request_uri;
          }

          location ^~ /.well-known/acme-challenge/ {
              root "/data/acme";
              default_type text/plain;
              try_files $uri =404;
          }
      }

      server {
          listen 443 ssl default_server;
          server_name _;
          ssl_certificate "/data/certs/$gw_cert.pem";
          ssl_certificate_key "/data/certs/$gw_cert.pem";
          ssl_protocols TLSv1.2 TLSv1.3;
          ssl_session_cache shared:gw_tls:10m;
          ssl_session_timeout 1h;
          root "/data/nginx/empty";

          set $gw_svc "";
          set $gw_up "";
          include overlay.conf;
          if (-f $gw_ovl) {
              rewrite ^(?!/_gw_overlay_route$) /_gwo$uri last;
          }
          rewrite ^(?!/_gw_overlay_route$) /_gw/$gw_dom$uri last;

          location / {
              return 404;
          }
          location ^~ /_gw/000000/ {
              internal;
              set $gw_svc 1;
              set $gw_up "http://127.0.0.1:3000";
              try_files /.nofile @gw_proxy;
          }
          location ^~ /_gw/000012/ {
              internal;
              set $gw_svc 3;
              set $gw_up "http://gw_be_3";
              try_files /.nofile @gw_proxy;
          }
          location = /_gw/000012/api {
              internal;
              deny 10.0.0.9;
              allow 10.0.0.0/8;
              deny all;
              set $gw_svc 2;
              set $gw_up "https://10.44.0.2:8443";
              try_files /.nofile @gw_proxy;
          }
          location ^~ /_gw/000012/api/ {
              internal;
              deny 10.0.0.9;
              allow 10.0.0.0/8;
              deny all;
              set $gw_svc 2;
              set $gw_up "https://10.44.0.2:8443";
              try_files /.nofile @gw_proxy;
          }
          location ^~ /_gwo/ {
              internal;
              auth_request /_gw_overlay_route;
              auth_request_set $gw_svc $upstream_http_x_gw_svc;
              auth_request_set $gw_up $upstream_http_x_gw_up;
              try_files /.nofile @gw_proxy;
          }
          location = /_gw_overlay_route {
              internal;
              proxy_pass http://unix:/data/nginx/overlay.sock:/route;
              proxy_pass_request_body off;
              proxy_pass_request_headers off;
              proxy_set_header Content-Length "";
              proxy_set_header X-Gw-Host $host;
              proxy_set_header X-Gw-Uri $request_uri;
              proxy_set_header X-Gw-Addr $remote_addr;
              proxy_connect_timeout 2s;
              proxy_read_timeout 5s;
          }

          location @gw_proxy {
              if ($gw_up = "") {
                  return 404;
              }
              proxy_pass $gw_up$request_uri;
              proxy_http_version 1.1;
              proxy_set_header Host $host;
              proxy_set_header X-Real-IP $remote_addr;
              proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
              proxy_set_header X-Forwarded-Proto $scheme;
              proxy_set_header X-Forwarded-Host $host;
              proxy_set_header Upgrade $http_upgrade;
              proxy_set_header Connection $gw_connection;
              proxy_read_timeout 1h;
              proxy_buffering off;
          }
      }
      "
    `);
  });

  it('makes a prefix match itself and its sub-paths only (/api, /api/x, not /apix)', () => {
    const text = renderHttpConfig([httpRoute({ pathLocation: '/api' })], [], options);
    expect(text).toContain('location = /_gw/000000/api {');
    expect(text).toContain('location ^~ /_gw/000000/api/ {');
    expect(text).not.toContain('location ^~ /_gw/000000/api {');
  });

  it('emits locations in nginx order whatever the input order', () => {
    const text = renderHttpConfig([
      httpRoute({ serviceId: 1, pathLocation: '/b' }),
      httpRoute({ serviceId: 2, pathLocation: '/a-b' }),
      httpRoute({ serviceId: 3, pathLocation: '/a' }),
    ], [], options);
    const order = [...text.matchAll(/location ([=^~]+ \/_gw\/\S+) \{/g)].map((m) => m[1]);
    expect(order).toEqual(['= /_gw/000000/a', '^~ /_gw/000000/a/', '= /_gw/000000/a-b', '^~ /_gw/000000/a-b/', '= /_gw/000000/b', '^~ /_gw/000000/b/']);
  });

  it('redirects to a non-standard HTTPS port', () => {
    expect(renderHttpConfig([], [], { ...options, httpsPort: 8443 })).toContain('return 301 https://$host:8443$request_uri;');
  });

  it('refuses values that could inject config', () => {
    expect(() => renderHttpConfig([httpRoute({ pathLocation: '/a { return 200; }' })], [], options)).toThrow('invalid path');
    expect(() => renderHttpConfig([httpRoute({ backendHost: '1.2.3.4; evil' })], [], options)).toThrow('invalid backend host');
    expect(() => renderHttpConfig([httpRoute({ allowedIps: ['all; allow 0.0.0.0/0'] })], [], options)).toThrow('invalid allowed IP');
    expect(() => renderHttpConfig([httpRoute({ domain: 'other.example.com' })], [], options)).toThrow('has no domain entry');
    expect(() => renderHttpConfig([], [{ domainId: 1, domain: '../etc', ssl: 'self-signed' }], options)).toThrow('invalid domain');
    expect(() => renderHttpConfig([], [], { ...options, certsDir: '/data/$x' })).toThrow('refusing file path');
  });
});

describe('renderStreamConfig', () => {
  it('renders one server per protocol and port, TLS with the domain certificate, identity maps for the log', () => {
    const text = renderStreamConfig([
      streamRoute({ serviceId: 8, proto: 'udp', backendPort: 53 }),
      streamRoute({ serviceId: 7, ssl: true, domain: 'db.example.com', allowedIps: ['192.0.2.0/24'], blockedIps: ['192.0.2.9'] }),
      streamRoute({ serviceId: 9, port: 20001, ssl: true }),
    ], { ...options, listenAddress: '127.0.0.1' });
    expect(text).toMatchInlineSnapshot(`
      "map $protocol:$server_port $gw_svc {
          default "";
          TCP:20000 7;
          UDP:20000 8;
          TCP:20001 9;
      }

      map $protocol:$server_port $gw_domain {
          default "";
          TCP:20000 "db.example.com";
      }

      map $protocol:$server_port $gw_stream_cert {
          default _fallback;
          TCP:20000 "db.example.com";
      }

      log_format gw_stream escape=json '{"time":"$time_iso8601","type":"tcp","svc":"$gw_svc","host":"$gw_domain","remote":"$remote_addr",'
          '"proto":"$protocol","status":"$status","rx":"$bytes_received","tx":"$bytes_sent",'
          '"upstream":"$upstream_addr","duration":"$session_time"}';
      access_log "/data/nginx/logs/access-stream.log" gw_stream;
      proxy_connect_timeout 5s;

      server {
          listen 127.0.0.1:20000 ssl;
          deny 192.0.2.9;
          allow 192.0.2.0/24;
          deny all;
          ssl_certificate "/data/certs/$gw_stream_cert.pem";
          ssl_certificate_key "/data/certs/$gw_stream_cert.pem";
          proxy_pass "10.44.0.2:5432";
      }

      server {
          listen 127.0.0.1:20000 udp;
          proxy_timeout 60s;
          proxy_pass "10.44.0.2:53";
      }

      server {
          listen 127.0.0.1:20001 ssl;
          ssl_certificate "/data/certs/$gw_stream_cert.pem";
          ssl_certificate_key "/data/certs/$gw_stream_cert.pem";
          proxy_pass "10.44.0.2:5432";
      }
      "
    `);
  });

  it('never turns on TLS for UDP', () => {
    expect(renderStreamConfig([streamRoute({ proto: 'udp', ssl: true })], options)).toContain('listen 20000 udp;');
  });
});

describe('renderNginxConfig', () => {
  it('produces the files of a generation: three configs and where the overlay lives', () => {
    const files = renderNginxConfig({ http: [], stream: [], domains: [] }, options);
    expect(Object.keys(files)).toEqual(['nginx.conf', 'http.conf', 'stream.conf', 'overlay.conf']);
    expect(files['overlay.conf']).toBe('set $gw_ovl "/data/nginx/overlay/0/$gw_dom";\n');
    expect(overlayConfFor(options, 7)['overlay.conf']).toContain('"/data/nginx/overlay/7/$gw_dom"');
    expect(() => renderNginxConfig({ http: [], stream: [], domains: [] }, { ...options, httpPort: 0 })).toThrow('invalid HTTP port');
  });
});
