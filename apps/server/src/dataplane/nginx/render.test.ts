import { describe, expect, it } from 'vitest';
import { httpRoute, streamRoute, TEST_RENDER_OPTIONS } from '../test-support.js';
import type { DesiredHttpRoute, DesiredStreamRoute } from '../types.js';
import type { NginxRenderOptions } from './options.js';
import { renderHttpInstance } from './render-main.js';
import { renderStreamInstance, streamCertificateName, streamInstanceKey } from './render-stream.js';
import { buildRouteTable, routePrefix, upstreamUrl } from './routes.js';

const options: NginxRenderOptions = { ...TEST_RENDER_OPTIONS, consoleHost: 'gw.example.com' };

const http = (over: Partial<DesiredHttpRoute>): DesiredHttpRoute => httpRoute({ domain: 'app.example.com', ...over });
const stream = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => streamRoute(over);
const domains = [{ domainId: 1, domain: 'app.example.com', ssl: 'self-signed' as const }];

describe('renderHttpInstance', () => {
  const files = renderHttpInstance(options, '/data/nginx/gen/4', '-- lua');
  const conf = files['nginx.conf'] ?? '';

  it('holds no service: routes, access lists and certificates come from Lua shared dictionaries', () => {
    expect(Object.keys(files)).toEqual(['nginx.conf', 'postern.lua', 'postern_access.lua']);
    expect(files['postern.lua']).toBe('-- lua');
    expect(files['postern_access.lua']).toContain('function _M.check(route, host, path, loose)');
    expect(conf).toContain('lua_package_path "/data/nginx/gen/4/?.lua;/usr/share/lua/5.1/?.lua;;";');
    for (const dict of [
      'gw_routes 16384k',
      'gw_certs 32768k',
      'gw_acme 1024k',
      'gw_live 16384k',
      'gw_stats 16384k',
      'gw_access 16384k',
    ])
      expect(conf).toContain(`lua_shared_dict ${dict};`);
    expect(conf).toContain('access_by_lua_block { require("postern").route() }');
    expect(conf).toContain('ssl_certificate_by_lua_block { require("postern").certificate() }');
    expect(conf).not.toMatch(/app\.example\.com|10\.44\.0\.2/);
  });

  it('sets identity headers only from the access check, on every proxied location (docs/ACCESS.md)', () => {
    // Every location that proxies replaces (or, empty, drops) a client's X-Postern-* headers.
    const proxied = conf.split('location ').slice(1);
    expect(proxied.length).toBeGreaterThanOrEqual(3);
    for (const location of proxied.filter((text) => text.includes('proxy_pass'))) {
      for (const header of [
        'X-Postern-User $gw_access_user',
        'X-Postern-Email $gw_access_email',
        'X-Postern-Groups $gw_access_groups',
      ])
        expect(location).toContain(`proxy_set_header ${header};`);
    }
    expect(conf).toContain('location /_postern/access/ {');
  });

  it('never cuts connections on a reload, passes responses on unbuffered, and never spools bodies to disk', () => {
    expect(conf).not.toContain('worker_shutdown_timeout');
    expect(conf).toContain('proxy_buffering off;');
    expect(conf).toContain('proxy_request_buffering off;');
  });

  it('listens on HTTP, HTTPS and the no-domain port, and on a control socket in a root-only directory', () => {
    // reuseport: a master replacing a killed one binds beside its orphaned workers.
    expect(conf).toContain('listen 80 default_server reuseport;');
    expect(conf).toContain('listen 443 ssl default_server reuseport;');
    expect(conf).toContain('listen 8443 ssl default_server reuseport;');
    expect(conf).toContain('listen unix:/data/nginx/control/control.sock;');
    expect(conf).toContain('resolver 10.0.0.53 valid=30s ipv6=off;');
  });

  it('bounds a stalled handshake and header by the handshake timeout, and sizes the workers as told', () => {
    expect(conf).toContain('client_header_timeout 10s;');
    expect(conf).toContain('reset_timedout_connection on;');
    expect(conf).toContain('worker_connections 4096;');
    expect(conf).toContain('worker_rlimit_nofile 9216;');
    const sized =
      renderHttpInstance(
        { ...options, workerConnections: 18_432, workerOpenFiles: 20_000, handshakeTimeoutSeconds: 5 },
        '/data/nginx/gen/4',
        '',
      )['nginx.conf'] ?? '';
    expect(sized).toContain('worker_connections 18432;');
    expect(sized).toContain('worker_rlimit_nofile 20000;');
    expect(sized).toContain('client_header_timeout 5s;');
    for (const bad of [{ workerConnections: 10 }, { handshakeTimeoutSeconds: 0.5 }, { workerOpenFiles: 2 ** 21 }])
      expect(() => renderHttpInstance({ ...options, ...bad }, '/data/nginx/gen/4', '')).toThrow(/invalid/);
  });

  it('hands the Lua module its options as JSON in a long string, every value allow-listed', () => {
    expect(conf).toContain(
      '"console_host":"gw.example.com","console_upstream":"http://127.0.0.1:3000","no_domain_port":8443',
    );
    expect(() => renderHttpInstance({ ...options, consoleHost: 'gw"]==]' }, '/data/nginx/gen/4', '')).toThrow(
      'invalid console host',
    );
    expect(() => renderHttpInstance({ ...options, resolvers: ['10.0.0.1; evil'] }, '/data/nginx/gen/4', '')).toThrow(
      'invalid name server',
    );
    expect(() => renderHttpInstance(options, '/data/nginx/gen/4 x', '')).toThrow('refusing file path');
  });
});

describe('renderStreamInstance', () => {
  it('is one small nginx per service: its own pid and error log, the service id for the access log', () => {
    const conf = renderStreamInstance(stream({ allowedIps: ['203.0.113.0/24'], blockedIps: ['203.0.113.9'] }), options);
    expect(streamInstanceKey(stream({}))).toBe('tcp-30000');
    expect(conf).toContain('worker_processes 1;');
    expect(conf).toContain('pid "/data/nginx/stream/tcp-30000/nginx.pid";');
    expect(conf).toContain('listen 30000;');
    expect(conf).toContain('set $gw_svc 7;');
    expect(conf).toMatch(/deny 203\.0\.113\.9;\s+allow 203\.0\.113\.0\/24;\s+deny all;/);
    expect(conf).toContain('proxy_pass "10.44.0.2:5432";');
    expect(conf).not.toContain('resolver');
  });

  it('terminates TLS with the domain’s certificate, read by the master; UDP sessions end after a silence', () => {
    const tls = renderStreamInstance(stream({ ssl: true, domain: 'app.example.com' }), options);
    expect(tls).toContain('listen 30000 ssl;');
    expect(tls).toContain('ssl_certificate "/data/certs/app.example.com.pem";');
    expect(streamCertificateName(stream({ ssl: true }))).toBe('_fallback');
    const udp = renderStreamInstance(stream({ proto: 'udp', ssl: true }), options);
    expect(udp).toContain('listen 30000 udp;');
    expect(udp).toContain('proxy_timeout 60s;');
    expect(udp).not.toContain('ssl_certificate');
  });

  it('resolves a backend name per session, so a name that does not resolve never keeps the instance from starting', () => {
    const conf = renderStreamInstance(stream({ backendHost: 'db.internal' }), options);
    expect(conf).toContain('resolver 10.0.0.53 valid=30s ipv6=off;');
    expect(conf).toContain('set $gw_up "db.internal:5432";');
    expect(conf).toContain('proxy_pass $gw_up;');
    expect(() => renderStreamInstance(stream({ backendHost: 'db.internal' }), { ...options, resolvers: [] })).toThrow(
      'needs a name server',
    );
    expect(() => renderStreamInstance(stream({ backendHost: 'x;y' }), options)).toThrow('invalid backend host');
    expect(() => renderStreamInstance(stream({ allowedIps: ['10.0.0.1 ; include /x'] }), options)).toThrow(
      'invalid allowed IP',
    );
  });
});

describe('buildRouteTable', () => {
  it('groups routes by host, longest prefix first, with access lists as numbers and a revision per service', () => {
    const table = buildRouteTable(
      [
        http({ serviceId: 1 }),
        http({ serviceId: 2, pathLocation: '/api/', allowedIps: ['10.0.0.0/8'], blockedIps: ['10.0.0.9'] }),
        http({
          serviceId: 3,
          domain: null,
          pathLocation: '/tools',
          backendProto: 'https',
          backendHost: 'localhost',
          backendPort: 9000,
        }),
      ],
      domains,
      { staticHosts: new Map([['localhost', '127.0.0.1']]) },
    );
    expect(JSON.parse(table.hosts.get('app.example.com') ?? '')).toEqual([
      {
        s: 2,
        r: table.revisions.get(2),
        p: '/api',
        u: 'http://10.44.0.2:80',
        a: [[167772160, 8]],
        b: [[167772169, 32]],
      },
      { s: 1, r: table.revisions.get(1), p: '/', u: 'http://10.44.0.2:80' },
    ]);
    expect(JSON.parse(table.hosts.get('') ?? '')).toEqual([
      { s: 3, r: table.revisions.get(3), p: '/tools', u: 'https://127.0.0.1:9000' },
    ]);
    expect(table.rejected.size).toBe(0);
  });

  it('gives a service a new revision exactly when what it serves changes', () => {
    const rev = (route: DesiredHttpRoute) => buildRouteTable([route], domains).revisions.get(route.serviceId);
    const base = rev(http({}));
    expect(rev(http({}))).toBe(base);
    expect(rev(http({ nodeId: 9 }))).toBe(base); // who owns it is not what it serves
    expect(rev(http({ backendPort: 81 }))).not.toBe(base);
    expect(rev(http({ blockedIps: ['10.0.0.9'] }))).not.toBe(base);
    expect(rev(http({ pathLocation: '/x' }))).not.toBe(base);
  });

  it('sets aside what it cannot serve and keeps the rest: an unknown domain, the console’s host, a second service on a path or on its case variant', () => {
    const table = buildRouteTable(
      [
        http({ serviceId: 1, pathLocation: '/api' }),
        http({ serviceId: 2, pathLocation: '/api/' }),
        http({ serviceId: 3, domain: 'missing.example.com' }),
        http({ serviceId: 4, domain: 'gw.example.com' }),
        http({ serviceId: 5, backendHost: 'bad host' }),
        http({ serviceId: 6, pathLocation: '/ok' }),
        // Stored before the rules of the contract's isPathLocation and pathLocationsDifferInCase.
        http({ serviceId: 7, pathLocation: '/API' }),
        http({ serviceId: 8, pathLocation: '/OK/x' }),
        http({ serviceId: 9, pathLocation: '/adm.' }),
        http({ serviceId: 10, pathLocation: '/ok/X' }),
      ],
      [...domains, { domainId: 2, domain: 'gw.example.com', ssl: 'self-signed' }],
      { reservedHosts: ['gw.example.com'] },
    );
    expect(Object.fromEntries(table.rejected)).toEqual({
      2: 'another service already serves /api on app.example.com',
      3: 'domain missing.example.com does not exist',
      4: "gw.example.com is the console's host name; no service can be published there",
      5: 'invalid backend host: "bad host"',
      7: '/API differs only in letter case from /api, which another service serves on app.example.com',
      8: '/OK/x differs only in letter case from /ok, which another service serves on app.example.com',
      9: 'invalid path: "/adm."',
    });
    expect(JSON.parse(table.hosts.get('app.example.com') ?? '').map((r: { s: number }) => r.s)).toEqual([10, 1, 6]);
  });

  it('normalises prefixes and substitutes names from /etc/hosts', () => {
    expect(routePrefix('/api/')).toBe('/api');
    expect(routePrefix('/')).toBe('/');
    expect(upstreamUrl(http({ backendHost: 'db' }), new Map([['db', '10.1.1.1']]))).toBe('http://10.1.1.1:80');
    expect(upstreamUrl(http({ backendHost: 'db.internal' }), new Map())).toBe('http://db.internal:80');
  });
});
