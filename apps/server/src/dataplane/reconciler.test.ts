import { describe, expect, it } from 'vitest';
import { EMPTY_DESIRED_STATE, FakeCertificates, FakeNginx, FakeWireGuard } from './fakes.js';
import { createReconciler } from './reconciler.js';
import type { DesiredState } from './types.js';

function setup() {
  let state: DesiredState = EMPTY_DESIRED_STATE;
  let loads = 0;
  const nginx = new FakeNginx();
  const wireguard = new FakeWireGuard();
  const certs = new FakeCertificates();
  const warnings: object[] = [];
  const reconciler = createReconciler({
    loadDesiredState: () => { loads++; return state; },
    renderNginx: (s) => ({ 'http.conf': s.http.map((r) => r.serviceId).join(',') }),
    wireguard, nginx, certs,
    logger: { debug: () => undefined, info: () => undefined, warn: (o) => warnings.push(o), error: () => undefined },
  });
  return { reconciler, nginx, wireguard, certs, warnings, loads: () => loads, setState: (s: DesiredState) => { state = s; } };
}

const withService = (id: number): DesiredState => ({
  ...EMPTY_DESIRED_STATE,
  http: [{ serviceId: id, nodeId: 1, domain: null, pathLocation: '/', backendProto: 'http', backendHost: '127.0.0.1', backendPort: 80, allowedIps: [], blockedIps: [] }],
});

describe('createReconciler', () => {
  it('applies interface, peers, certificates and nginx from the desired state', async () => {
    const t = setup();
    t.setState({ ...withService(1), domains: [{ domainId: 1, domain: 'a.example.com', ssl: 'self-signed' }] });
    expect(await t.reconciler.runAtBoot()).toEqual({ ok: true, generation: 1 });
    expect(t.wireguard.gateway).toEqual(EMPTY_DESIRED_STATE.gateway);
    expect(t.nginx.files).toEqual({ 'http.conf': '1' });
    expect(t.certs.info('a.example.com')).not.toBeNull();
  });

  it('removes the certificate of a deleted domain once nginx no longer uses it', async () => {
    const t = setup();
    t.setState({ ...EMPTY_DESIRED_STATE, domains: [{ domainId: 1, domain: 'a.example.com', ssl: 'self-signed' }] });
    await t.reconciler.apply();
    t.setState(EMPTY_DESIRED_STATE);
    await t.reconciler.apply();
    expect(t.certs.info('a.example.com')).toBeNull();
  });

  it('ensures a certificate only for a new domain or a changed mode, not on every apply', async () => {
    const t = setup();
    const domain = { domainId: 1, domain: 'a.example.com', ssl: 'self-signed' as const };
    t.setState({ ...withService(1), domains: [domain] });
    await t.reconciler.apply();
    t.setState({ ...withService(2), domains: [domain, { domainId: 2, domain: 'b.example.com', ssl: 'self-signed' }] });
    await t.reconciler.apply();
    t.setState({ ...withService(3), domains: [{ ...domain, ssl: 'certbot' }] });
    await t.reconciler.apply();
    expect(t.certs.ensured).toEqual(['a.example.com:self-signed', 'b.example.com:self-signed', 'a.example.com:certbot']);
  });

  it('skips nginx when the rendered files did not change', async () => {
    const t = setup();
    await t.reconciler.apply();
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 1 });
    expect(t.nginx.applyCount).toBe(1);
  });

  it('coalesces a burst: one run in flight, everyone else shares the next one', async () => {
    const t = setup();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => {
      t.setState(withService(i + 1));
      return t.reconciler.apply();
    }));
    expect(t.loads()).toBe(2);
    expect(results[0]).toEqual({ ok: true, generation: 1 });
    expect(results.slice(1).every((r) => r.ok && r.generation === 2)).toBe(true);
    expect(t.nginx.files).toEqual({ 'http.conf': '10' });
  });

  it('reports a rejected generation and retries it on the next apply', async () => {
    const t = setup();
    await t.reconciler.apply();
    t.setState(withService(2));
    t.nginx.failNextApply('nginx: [emerg] unknown directive');
    expect(await t.reconciler.apply()).toEqual({ ok: false, message: 'nginx: [emerg] unknown directive' });
    expect(t.warnings).toHaveLength(1);
    expect(t.nginx.files).toEqual({ 'http.conf': '' });
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 2 });
  });

  it('still applies nginx when WireGuard fails, and reports the failure', async () => {
    const t = setup();
    t.setState(withService(4));
    t.wireguard.ensureInterface = () => Promise.reject(new Error('wireguard-go not found'));
    expect(await t.reconciler.apply()).toEqual({ ok: false, message: 'wireguard-go not found' });
    expect(t.nginx.files).toEqual({ 'http.conf': '4' });
  });
});
