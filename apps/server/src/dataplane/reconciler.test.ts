import { describe, expect, it } from 'vitest';
import { EMPTY_DESIRED_STATE, FakeCertificates, FakeNginx, FakeWireGuard } from './fakes.js';
import { createReconciler } from './reconciler.js';
import { indexRoutes } from './nginx/overlay.js';
import type { CertificateAdapter, DesiredState } from './types.js';

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

describe('createReconciler with the routing overlay', () => {
  const domain = { domainId: 1, domain: 'a.example.com', ssl: 'self-signed' as const };
  const route = (id: number, over: Partial<DesiredState['http'][number]> = {}): DesiredState['http'][number] => ({
    serviceId: id, nodeId: 1, domain: 'a.example.com', pathLocation: `/s${id}`, backendProto: 'http', backendHost: '10.44.0.2',
    backendPort: 80, allowedIps: [], blockedIps: [], ...over,
  });
  const stateWith = (http: DesiredState['http'], stream: DesiredState['stream'] = []): DesiredState => ({ ...EMPTY_DESIRED_STATE, domains: [domain], http, stream });

  /** Overlay dirs in memory, and an nginx whose reloads the test can hold open. */
  function setupOverlay() {
    let state = stateWith([route(1)]);
    const dirs = new Map<number, ReadonlyMap<string, string>>();
    const nginx = new FakeNginx();
    let gate: Promise<void> | null = null;
    const realApply = nginx.apply.bind(nginx);
    nginx.apply = async (files) => {
      if (gate) await gate;
      return realApply(files);
    };
    const errors: object[] = [];
    const certs: FakeCertificates & Pick<CertificateAdapter, 'pruneExcept'> = new FakeCertificates();
    const reconciler = createReconciler({
      loadDesiredState: () => state,
      renderNginx: (s) => ({ 'http.conf': JSON.stringify(s.http), 'stream.conf': JSON.stringify(s.stream) }),
      wireguard: new FakeWireGuard(),
      nginx,
      certs,
      logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (o) => errors.push(o) },
      overlay: {
        snapshot: (s) => ({ routes: indexRoutes(s.http, s.domains), reloadKey: JSON.stringify(s.stream) }),
        configFor: (epoch) => ({ 'overlay.conf': `epoch ${epoch}` }),
        store: {
          sync: (epoch, files) => { dirs.set(epoch, new Map(files)); return Promise.resolve(); },
          prune: (keep) => { for (const epoch of dirs.keys()) if (!keep.includes(epoch)) dirs.delete(epoch); return Promise.resolve(); },
          reset: () => { dirs.clear(); return Promise.resolve(); },
        },
        publish: () => undefined,
      },
      compactDelayMs: 0,
    });
    return {
      reconciler, nginx, dirs, errors, certs,
      setState: (s: DesiredState) => { state = s; },
      holdReloads: () => {
        let release = (): void => undefined;
        gate = new Promise((resolve) => { release = resolve; });
        return () => { gate = null; release(); };
      },
    };
  }

  async function eventually(check: () => void): Promise<void> {
    const deadline = Date.now() + 2000;
    for (;;) {
      try {
        check();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  it('serves an HTTP change from the overlay before any reload, then folds it into a new generation', async () => {
    const t = setupOverlay();
    await t.reconciler.runAtBoot();
    expect(t.nginx.applyCount).toBe(1);
    expect(t.nginx.files?.['overlay.conf']).toBe('epoch 1');

    t.setState(stateWith([route(1), route(2, { allowedIps: ['192.0.2.1'] })]));
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 1 });
    expect(t.nginx.applyCount).toBe(1);
    expect(t.dirs.get(1)?.get('000001')).toContain('"s":2');

    await eventually(() => expect(t.nginx.applyCount).toBe(2));
    expect(t.nginx.files?.['overlay.conf']).toBe('epoch 2');
    expect(t.nginx.files?.['http.conf']).toContain('"serviceId":2');
    await eventually(() => expect(t.dirs.get(2)).toEqual(new Map()));
  });

  it('reloads at once for what the overlay cannot carry (a stream service)', async () => {
    const t = setupOverlay();
    await t.reconciler.runAtBoot();
    t.setState(stateWith([route(1)], [{
      serviceId: 9, nodeId: 1, proto: 'tcp', port: 30000, ssl: false, domain: null, backendHost: '10.44.0.2', backendPort: 22, allowedIps: [], blockedIps: [],
    }]));
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 2 });
    expect(t.nginx.applyCount).toBe(2);
  });

  it('writes a change that arrives during a background reload into the overlay of the incoming generation too', async () => {
    const t = setupOverlay();
    await t.reconciler.runAtBoot();
    const release = t.holdReloads();
    t.setState(stateWith([route(1), route(2)]));
    await t.reconciler.apply();
    // The background reload to epoch 2 (with service 2) is under way and held: its overlay dir exists, empty.
    await eventually(() => expect(t.dirs.get(2)).toEqual(new Map()));
    t.setState(stateWith([route(1), route(2), route(3)]));
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 1 });
    expect(t.dirs.get(1)?.get('000001')).toContain('"s":3');
    expect(t.dirs.get(2)?.get('000001')).toContain('"s":3');
    release();
    await eventually(() => expect(t.nginx.files?.['http.conf']).toContain('"serviceId":3'));
    await eventually(() => expect(t.dirs.get(3)).toEqual(new Map()));
  });

  it('keeps the certificate a run is still making when a background reload prunes certificates', async () => {
    const t = setupOverlay();
    const kept: string[][] = [];
    t.certs.pruneExcept = (keep) => {
      kept.push([...keep]);
      return Promise.resolve([]);
    };
    await t.reconciler.runAtBoot();
    let release = (): void => undefined;
    const made = new Promise<void>((resolve) => { release = resolve; });
    const ensure = t.certs.ensure.bind(t.certs);
    t.certs.ensure = async (d) => {
      if (d.domain === 'new.example.com') await made;
      return ensure(d);
    };
    // An overlay change schedules a background reload; the next run (a stream change, so a reload of its own)
    // makes a new domain's certificate while that background reload prunes.
    t.setState(stateWith([route(1), route(2)]));
    await t.reconciler.apply();
    t.setState({
      ...stateWith([route(1), route(2)], [{
        serviceId: 9, nodeId: 1, proto: 'tcp', port: 30002, ssl: false, domain: null, backendHost: '10.44.0.2', backendPort: 22, allowedIps: [], blockedIps: [],
      }]),
      domains: [domain, { domainId: 2, domain: 'new.example.com', ssl: 'self-signed' }],
    });
    const run = t.reconciler.apply();
    await eventually(() => expect(kept.length).toBeGreaterThan(1));
    expect(kept.at(-1)).toContain('new.example.com');
    release();
    expect(await run).toMatchObject({ ok: true });
  });

  it('keeps the overlay serving when the background reload is refused, and reports it', async () => {
    const t = setupOverlay();
    await t.reconciler.runAtBoot();
    t.nginx.failNextApply('nginx: [emerg] no memory');
    t.setState(stateWith([route(1), route(4)]));
    expect(await t.reconciler.apply()).toEqual({ ok: true, generation: 1 });
    await eventually(() => expect(t.errors).toHaveLength(1));
    expect(t.dirs.get(1)?.get('000001')).toContain('"s":4');
    expect([...t.dirs.keys()]).toEqual([1]);
  });
});
