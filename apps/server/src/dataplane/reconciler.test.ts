import { describe, expect, it } from 'vitest';
import { createRecordingReconciler } from './offline.js';
import { EMPTY_STATE as EMPTY, httpRoute as http, TEST_RENDER_OPTIONS } from './test-support.js';
import type { DesiredState, DesiredStreamRoute } from './types.js';

const tcp = (over: Partial<DesiredStreamRoute>): DesiredStreamRoute => ({
  serviceId: 10,
  nodeId: 2,
  proto: 'tcp',
  port: 30000,
  ssl: false,
  domain: null,
  backendHost: '10.44.0.2',
  backendPort: 22,
  allowedIps: [],
  blockedIps: [],
  ...over,
});
const domain = (id: number, name: string, ssl: 'self-signed' | 'certbot' = 'self-signed') => ({
  domainId: id,
  domain: name,
  ssl,
});

function setup() {
  let state: DesiredState = EMPTY;
  let loads = 0;
  const { reconciler, proxy, wireguard, certs } = createRecordingReconciler({
    loadDesiredState: async () => {
      loads++;
      return Promise.resolve(state);
    },
    render: TEST_RENDER_OPTIONS,
  });
  return {
    reconciler,
    proxy,
    wireguard,
    certs,
    loads: () => loads,
    setState: (s: DesiredState) => {
      state = s;
    },
  };
}

describe('createReconciler', () => {
  it('applies the interface, peers, certificates, HTTP routes and TCP/UDP instances from the desired state', async () => {
    const t = setup();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')], http: [http({})], stream: [tcp({})] });
    const result = await t.reconciler.apply();
    expect(result.ok).toBe(true);
    expect(t.wireguard.gateway).toEqual(EMPTY.gateway);
    expect(JSON.parse(t.proxy.routes.get('a.test') ?? '[]')).toEqual([
      { s: 1, r: expect.any(String) as string, p: '/', u: 'http://10.44.0.2:80' },
    ]);
    expect([...t.proxy.streams.keys()]).toEqual(['tcp-30000']);
    expect(t.proxy.streams.get('tcp-30000')?.conf).toContain('proxy_pass "10.44.0.2:22";');
    expect(t.proxy.certificates).toEqual(new Set(['a.test']));
  });

  it('ensures a certificate only for a new domain or a changed mode, and drops a deleted domain’s', async () => {
    const t = setup();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')] });
    await t.reconciler.apply();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(2, 'b.test')] });
    await t.reconciler.apply();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test', 'certbot')] });
    await t.reconciler.apply();
    expect(t.certs.ensured).toEqual(['a.test:self-signed', 'b.test:self-signed', 'a.test:certbot']);
    expect(t.certs.info('b.test')).toBeNull();
    expect(t.proxy.certificates).toEqual(new Set(['a.test']));
  });

  it('walks the certificates on disk for leftovers only at the first apply, after forget, and when a domain goes', async () => {
    const t = setup();
    let prunes = 0;
    const prune = t.certs.pruneExcept.bind(t.certs);
    t.certs.pruneExcept = (keep, onDisk) => {
      prunes++;
      return prune(keep, onDisk);
    };
    // The walk itself (listed before the run's turn to push): exactly when a prune is due.
    let walks = 0;
    const list = t.certs.listPems.bind(t.certs);
    t.certs.listPems = () => {
      walks++;
      return list();
    };
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(2, 'b.test')], http: [http({})] });
    await t.reconciler.apply();
    expect(prunes).toBe(1);
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(2, 'b.test')], http: [http({ backendPort: 81 })] });
    await t.reconciler.apply();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(2, 'b.test'), domain(3, 'c.test')] });
    await t.reconciler.apply();
    expect(prunes).toBe(1);
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(3, 'c.test')] });
    await t.reconciler.apply();
    expect(prunes).toBe(2);
    expect(t.certs.info('b.test')).toBeNull();
    expect(t.proxy.certificates).toEqual(new Set(['a.test', 'c.test']));
    t.reconciler.forgetApplied();
    await t.reconciler.apply();
    expect(prunes).toBe(3);
    expect(walks).toBe(3);
  });

  it('sets aside a row it cannot serve, with the reason, and serves every other row', async () => {
    const t = setup();
    t.proxy.streamFailures.set('tcp-30000', 'port 30000/tcp is in use by another program on the gateway');
    t.wireguard.routeFailures.set(
      7,
      'cannot route 192.168.1.0/24 into the tunnel: the gateway host already routes this network',
    );
    t.setState({
      ...EMPTY,
      peers: [
        {
          nodeId: 7,
          publicKey: 'K',
          presharedKey: null,
          address: '10.44.0.7',
          allowedIps: ['10.44.0.7/32', '192.168.1.0/24'],
        },
      ],
      domains: [domain(1, 'a.test')],
      http: [
        http({ serviceId: 1, pathLocation: '/api' }),
        http({ serviceId: 2, pathLocation: '/api/' }),
        http({ serviceId: 3, pathLocation: '/' }),
        http({ serviceId: 4, domain: 'gw.test' }),
      ],
      stream: [tcp({ serviceId: 10 }), tcp({ serviceId: 11, port: 30001 }), tcp({ serviceId: 12, port: 30001 })],
    });
    const result = await t.reconciler.apply();
    expect(result.ok).toBe(true);
    expect(Object.fromEntries(result.rejected.http)).toEqual({
      2: 'another service already serves /api on a.test',
      4: 'domain gw.test does not exist',
    });
    expect(Object.fromEntries(result.rejected.tcp)).toEqual({
      10: 'port 30000/tcp is in use by another program on the gateway',
      12: 'another service already uses port 30001/tcp',
    });
    expect(Object.fromEntries(result.rejected.nodes)).toEqual({
      7: expect.stringContaining('already routes this network') as string,
    });
    expect(JSON.parse(t.proxy.routes.get('a.test') ?? '[]').map((r: { s: number }) => r.s)).toEqual([1, 3]);
    expect([...t.proxy.streams.keys()]).toEqual(['tcp-30001']);
  });

  it('keeps nginx converging when the tunnel fails, and reports the failure as a whole', async () => {
    const t = setup();
    t.wireguard.ensureInterface = () => Promise.reject(new Error('wireguard-go did not create postern0'));
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')], http: [http({})] });
    const result = await t.reconciler.apply();
    expect(result).toMatchObject({ ok: false, message: 'WireGuard: wireguard-go did not create postern0' });
    expect(t.proxy.routes.has('a.test')).toBe(true);
  });

  it('looks for connections to cut only when what a service serves changed', async () => {
    const t = setup();
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')], http: [http({})] });
    await t.reconciler.apply();
    expect(t.proxy.cutChecks).toBe(1);
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test'), domain(2, 'b.test')], http: [http({})] });
    await t.reconciler.apply();
    expect(t.proxy.cutChecks).toBe(1);
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')], http: [http({ blockedIps: ['203.0.113.9'] })] });
    await t.reconciler.apply();
    expect(t.proxy.cutChecks).toBe(2);
    t.reconciler.forgetApplied();
    await t.reconciler.apply();
    expect(t.proxy.cutChecks).toBe(3);
  });

  it('coalesces a burst: callers arriving during a run share the next one, which reads the newest state', async () => {
    const t = setup();
    const runs = [t.reconciler.apply(), t.reconciler.apply(), t.reconciler.apply(), t.reconciler.apply()];
    t.setState({ ...EMPTY, domains: [domain(1, 'a.test')], http: [http({})] });
    const results = await Promise.all(runs);
    expect(t.loads()).toBe(2);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(t.proxy.routes.has('a.test')).toBe(true);
  });
});
