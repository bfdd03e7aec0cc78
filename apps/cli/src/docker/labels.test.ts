import { describe, expect, it } from 'vitest';
import { LabelProblemsUpdateSchema, accessMessages } from '@postern/contract';
import type {
  AccessPolicy,
  ServiceAccess,
  ServiceAccessUpdate,
  AgentHttpServiceCreate,
  LabelProblemReport,
  AgentTcpServiceCreate,
  HttpService,
  ServiceType,
  TcpService,
} from '@postern/contract';
import { parseCommand } from '../args.js';
import { checkAccessBody } from '../commands/access.js';
import { CliError, FieldsRefusedError, TokenRejectedError } from '../errors.js';
import { createFakeSystem } from '../fake-system.js';
import { makeNode } from '../fixtures.js';
import { LABEL_VALUE_MAX, servicesOfContainer, type ContainerInfo } from './labels.js';
import {
  RETRY_REFUSED_MS,
  reconcileLabels,
  type LabelApi,
  type RefusedCreations,
  type SettledAccess,
} from './reconcile.js';
import { runLabelWatcher, toContainerInfo, type DockerEngine } from './watch.js';

// Docker labels → services (docs/LABELS.md), against an in-memory gateway that keeps the rules the real one enforces
// for a node's token (modules/services/decisions.ts, the unique route and port, the node's service quota). The real
// engine and gateway are exercised by e2e/images/gateway.test.ts.

const regular = { choosesHost: false };

function container(name: string, labels: Record<string, string>, more: Partial<ContainerInfo> = {}): ContainerInfo {
  return {
    name,
    running: true,
    labels,
    networkMode: `container:${'a'.repeat(64)}`,
    published: [],
    addresses: [],
    ...more,
  };
}

type Row = (HttpService | TcpService) & { type: ServiceType };

const policy = (fields: Partial<AccessPolicy>): AccessPolicy => ({
  mode: 'protected',
  providerId: null,
  providerName: null,
  allowEmails: [],
  allowEmailDomains: [],
  allowGroups: [],
  passwordSet: false,
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: 86_400,
  ...fields,
});

/** The gateway's side for one node's token, with the operator's hand on it. */
function fakeGateway(options: { maxServices?: number; domainProviderId?: number } = {}) {
  const rows: Row[] = [];
  /** Service access policies (modules/access/policies.ts): identity provider 7 exists; the operator's stand. */
  const access = new Map<number, { own: AccessPolicy; setBy: 'admin' | 'node' }>();
  const accessView = (id: number): ServiceAccess => {
    const own = access.get(id);
    const domainPolicy = policy({ mode: 'public', providerId: options.domainProviderId ?? null });
    return {
      serviceId: id,
      nodeId: 1,
      domain: 'app.example.com',
      mode: own?.own.mode ?? 'inherit',
      own: own?.own ?? null,
      setBy: own?.setBy ?? null,
      domainPolicy,
      effective: { ...(own?.own ?? domainPolicy), source: own ? 'service' : 'domain' },
    };
  };
  let nextId = 1;
  const calls: string[] = [];
  const refuse = (message: string, status: number) => new CliError(`The gateway answered: ${message} (HTTP ${status})`);
  const routeOf = (row: Row) =>
    'pathLocation' in row ? `${row.domain ?? ''}${row.pathLocation}` : `${row.proto}/${row.port}`;
  const base = (name: string) => ({
    id: nextId++,
    nodeId: 1,
    name,
    enabled: true,
    applyError: null,
    expiresAt: null as string | null,
    createdBy: 'node' as const,
    disabledBy: null as 'admin' | 'node' | 'system' | null,
    expirySetBy: null as 'admin' | 'node' | null,
    created_at: '2026-11-27T00:00:00Z',
    updated_at: '2026-11-27T00:00:00Z',
  });
  const add = (row: Row): Row => {
    if (rows.length >= (options.maxServices ?? 50)) {
      throw refuse('This node has reached its limit of services (POSTERN_NODE_MAX_SERVICES on the gateway)', 400);
    }
    if (rows.some((other) => other.type === row.type && routeOf(other) === routeOf(row))) {
      throw refuse('Another service already uses this domain and path', 409);
    }
    rows.push(row);
    return row;
  };
  const find = (type: ServiceType, id: number) => {
    const row = rows.find((candidate) => candidate.type === type && candidate.id === id);
    if (!row) throw refuse('Service not found', 404);
    return row;
  };
  const api: LabelApi = {
    listServices: (async (type: ServiceType, page: number, limit: number) => {
      const of = rows.filter((row) => row.type === type);
      return { data: of.slice((page - 1) * limit, page * limit), page, limit, total: of.length };
    }) as LabelApi['listServices'],
    async createHttpService(body: AgentHttpServiceCreate) {
      calls.push(`create http ${body.name}${body.enabled === false ? ' disabled' : ''}`);
      return add({
        ...base(body.name),
        enabled: body.enabled ?? true,
        disabledBy: body.enabled === false ? 'node' : null,
        type: 'http',
        domain: body.domain ?? null,
        pathLocation: body.pathLocation ?? '/',
        backendProto: body.backendProto ?? 'http',
        backendHost: '10.8.0.2',
        backendPort: body.backendPort ?? 80,
        publicAccess: `https://${body.domain ?? ''}${body.pathLocation ?? '/'}`,
        source: body.source ?? null,
      } as unknown as Row) as HttpService;
    },
    async createTcpService(body: AgentTcpServiceCreate) {
      calls.push(`create tcp ${body.name}`);
      return add({
        ...base(body.name),
        type: 'tcp',
        proto: body.proto ?? 'tcp',
        port: body.port ?? 30000 + nextId,
        backendPort: body.backendPort,
        publicAccess: `tcp/${body.port ?? 30000 + nextId}`,
        source: body.source ?? null,
      } as unknown as Row) as TcpService;
    },
    // The rules of decisions.ts for a token.
    async setServiceEnabled(type, id, enabled) {
      calls.push(`${enabled ? 'enable' : 'disable'} ${id}`);
      const row = find(type, id);
      if (enabled && !row.enabled && row.disabledBy !== 'node') throw refuse('The operator disabled this service', 403);
      if (!enabled && row.enabled) row.disabledBy = 'node';
      if (enabled) row.disabledBy = null;
      row.enabled = enabled;
    },
    getServiceAccess(id: number) {
      find('http', id);
      return Promise.resolve(accessView(id));
    },
    updateServiceAccess(id: number, body: ServiceAccessUpdate) {
      calls.push(`access ${id} ${body.mode ?? ''}`);
      find('http', id);
      const refuseField = (field: string, message: string) =>
        Promise.reject(new FieldsRefusedError('The gateway refused it (HTTP 422)', [{ field, message }]));
      if (access.get(id)?.setBy === 'admin') return refuseField('mode', accessMessages.setByOperator);
      if (body.providerId != null && body.providerId !== 7)
        return refuseField('providerId', accessMessages.providerNotFound);
      if (body.mode === 'inherit') access.delete(id);
      else
        access.set(id, {
          setBy: 'node',
          own: policy({
            mode: body.mode ?? 'protected',
            providerId: body.providerId ?? null,
            allowEmails: body.allowEmails ?? [],
            allowEmailDomains: body.allowEmailDomains ?? [],
            allowGroups: body.allowGroups ?? [],
            shareLinks: body.shareLinks ?? false,
          }),
        });
      return Promise.resolve(accessView(id));
    },
    async deleteService(type, id) {
      calls.push(`delete ${id}`);
      const row = find(type, id);
      if (row.createdBy !== 'node' || (!row.enabled && row.disabledBy !== 'node') || row.expirySetBy === 'admin') {
        throw refuse('The operator decided on this service', 403);
      }
      rows.splice(rows.indexOf(row), 1);
    },
  };
  /** The operator creates a service in the console (no source). */
  const operatorService = (name: string, domain: string): Row =>
    add({
      ...base(name),
      createdBy: 'admin',
      type: 'http',
      domain,
      pathLocation: '/',
      backendProto: 'http',
      backendHost: '10.8.0.2',
      backendPort: 9000,
      publicAccess: `https://${domain}/`,
      source: null,
    } as unknown as Row);
  return { api, rows, calls, operatorService, access };
}

describe('Docker labels', () => {
  it('turn into the create request the gateway validates, with where it came from', () => {
    const { services, problems } = servicesOfContainer(
      container('web', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080', other: 'x' }),
      regular,
    );
    expect(problems).toEqual([]);
    expect(services).toHaveLength(1);
    expect(services[0]?.body).toMatchObject({ name: 'web', domain: 'app.example.com', backendPort: 8080 });
    expect(services[0]?.source).toMatchObject({ kind: 'docker-labels', container: 'web', key: 'http' });
    expect(services[0]?.source.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('use the published host port, or the container address on a gateway node, and say why neither works', () => {
    const published = container(
      'db',
      { 'postern.tcp.port': '5432' },
      { networkMode: 'bridge', published: [{ privatePort: 5432, publicPort: 15432, type: 'tcp', ip: '0.0.0.0' }] },
    );
    expect(servicesOfContainer(published, regular).services[0]?.body).toMatchObject({ backendPort: 15432 });
    const onNetwork = container(
      'db',
      { 'postern.tcp.port': '5432' },
      { networkMode: 'bridge', addresses: ['172.18.0.5'] },
    );
    expect(servicesOfContainer(onNetwork, { choosesHost: true }).services[0]?.body).toMatchObject({
      backendHost: '172.18.0.5',
      backendPort: 5432,
    });
    expect(servicesOfContainer(onNetwork, regular).problems[0]?.message).toContain('is not reachable from the node');
    const loopback = container(
      'db',
      { 'postern.tcp.port': '5432' },
      { networkMode: 'bridge', published: [{ privatePort: 5432, publicPort: 15432, type: 'tcp', ip: '127.0.0.1' }] },
    );
    expect(servicesOfContainer(loopback, regular).problems[0]?.message).toContain('the tunnel does not reach');
  });

  it('reads what `docker ps` answers', () => {
    expect(
      toContainerInfo({
        Names: ['/web'],
        State: 'exited',
        Labels: { a: 'b' },
        HostConfig: { NetworkMode: 'bridge' },
        Ports: [
          { PrivatePort: 80, Type: 'tcp' },
          { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
        ],
        NetworkSettings: { Networks: { bridge: { IPAddress: '172.17.0.2' }, none: { IPAddress: '' } } },
      }),
    ).toEqual({
      name: 'web',
      running: false,
      labels: { a: 'b' },
      networkMode: 'bridge',
      published: [{ privatePort: 80, publicPort: 8080, type: 'tcp', ip: '0.0.0.0' }],
      addresses: ['172.17.0.2'],
    });
  });

  // Attacker's labels: each refused for its container with a reason, nothing of it sent to the gateway.
  it.each([
    [
      'nginx injection in the domain',
      { 'postern.http.domain': 'a.example.com; return 200 "owned"', 'postern.http.port': '80' },
      'postern.http.domain',
    ],
    [
      'a newline in the path',
      { 'postern.http.domain': 'a.example.com', 'postern.http.path': '/x\n}', 'postern.http.port': '80' },
      'postern.http.path',
    ],
    [
      'a brace in the path',
      { 'postern.http.domain': 'a.example.com', 'postern.http.path': '/x{', 'postern.http.port': '80' },
      'postern.http.path',
    ],
    [
      'a port that is no number',
      { 'postern.http.domain': 'a.example.com', 'postern.http.port': '80;' },
      'postern.http.port',
    ],
    [
      'a port out of range',
      { 'postern.http.domain': 'a.example.com', 'postern.http.port': '70000' },
      'postern.http.port',
    ],
    [
      'a huge value',
      { 'postern.http.domain': `${'a'.repeat(100_000)}.com`, 'postern.http.port': '80' },
      `longer than ${LABEL_VALUE_MAX}`,
    ],
    ['an unknown field', { 'postern.http.backend-host': '10.0.0.1', 'postern.http.port': '80' }, 'unknown label'],
    [
      'a backend protocol of its own',
      { 'postern.http.domain': 'a.example.com', 'postern.http.port': '80', 'postern.http.protocol': 'gopher' },
      'postern.http.protocol',
    ],
    [
      'TLS on UDP',
      { 'postern.tcp.port': '53', 'postern.tcp.protocol': 'udp', 'postern.tcp.tls': 'true' },
      'postern.tcp.tls',
    ],
    [
      'a control character in the name',
      { 'postern.http.domain': 'a.example.com', 'postern.http.port': '80', 'postern.http.name': 'a\u0000b\nc' },
      'postern.http.name',
    ],
    [
      'a name longer than the gateway takes',
      { 'postern.http.domain': 'a.example.com', 'postern.http.port': '80', 'postern.http.name': 'n'.repeat(200) },
      'postern.http.name',
    ],
  ])('refuse %s', (_, labels, says) => {
    const { services, problems } = servicesOfContainer(container('evil', labels), regular);
    expect(services).toEqual([]);
    expect(problems.map((problem) => problem.message).join('\n')).toContain(says);
    // The report is one printable line, however hostile the value.
    for (const problem of problems) {
      expect(problem.message.length).toBeLessThan(600);
      expect(problem.message).not.toMatch(/[\n\r]/);
      expect(problem.message).not.toContain('\u0000');
    }
  });

  it('describe an HTTP service’s access policy with the options of `postern access`, parsed and checked alike', () => {
    const labels = {
      'postern.http.domain': 'app.example.com',
      'postern.http.port': '8080',
      'postern.http.access': 'protected',
      'postern.http.access.sso-provider': '7',
      'postern.http.access.allow-email': 'Ann@corp.test, bob@corp.test',
      'postern.http.access.allow-group': 'ops',
      'postern.http.access.share-links': 'true',
      'postern.http.api.port': '9090',
      'postern.http.api.domain': 'api.example.com',
      'postern.http.api.access': 'public',
    };
    const { services, problems } = servicesOfContainer(container('web', labels), regular);
    expect(problems).toEqual([]);
    const flags = parseCommand([
      'access',
      '5',
      '--sso-provider',
      '7',
      '--allow-email',
      'Ann@corp.test, bob@corp.test',
      '--allow-group',
      'ops',
      '--share-links',
    ]);
    if (flags.kind !== 'access' || !flags.auth) throw new Error('not parsed');
    const fromFlags = checkAccessBody(flags.auth, undefined, (option) => option);
    expect(services.map((service) => [service.source.key, service.type === 'http' ? service.access : null])).toEqual([
      ['http', 'body' in fromFlags ? fromFlags.body : fromFlags],
      ['http.api', { mode: 'public' }],
    ]);
    expect(services[0]?.type === 'http' && services[0].access).toMatchObject({
      allowEmails: ['ann@corp.test', 'bob@corp.test'],
    });
    // The policy is not part of what identifies the service: changing it does not replace the service.
    const plain = servicesOfContainer(
      container('web', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080' }),
      regular,
    );
    expect(plain.services[0]?.source.digest).toBe(services[0]?.source.digest);
  });

  it('refuse bad access labels per service, name the label, and never take a password', () => {
    const problemsOf = (labels: Record<string, string>) =>
      servicesOfContainer(
        container('web', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080', ...labels }),
        regular,
      );
    const cases: [Record<string, string>, string][] = [
      [{ 'postern.http.access.allow-email': 'not-an-email' }, 'postern.http.access.allow-email: '],
      [{ 'postern.http.access.sso-provider': 'corp' }, 'postern.http.access.sso-provider must be the numeric ID'],
      [{ 'postern.http.access': 'open' }, 'postern.http.access must be public, protected or inherit'],
      [
        { 'postern.http.access': 'public', 'postern.http.access.allow-group': 'ops' },
        'postern.http.access public takes no other access option',
      ],
      [{ 'postern.http.access.share-links': 'yes' }, 'postern.http.access.share-links must be true or false'],
      [{ 'postern.http.access.password': 'hunter2' }, 'postern access ID --password-file FILE'],
      [{ 'postern.http.access.owner': 'me' }, 'an access policy takes sso-provider'],
      [{ 'postern.tcp.port': '5432', 'postern.tcp.access': 'protected' }, 'access policies are for HTTP services'],
    ];
    for (const [labels, message] of cases) {
      const { services, problems } = problemsOf(labels);
      expect(problems.map((problem) => problem.message).join('\n'), JSON.stringify(labels)).toContain(message);
      expect(JSON.stringify(problems)).not.toContain('hunter2');
      // A service whose policy is wrong is not published without it.
      const key = 'postern.tcp.access' in labels ? 'tcp' : 'http';
      expect(services.map((service) => service.source.key)).not.toContain(key);
    }
  });

  it('refuse a container asking for more than 16 services, as a whole', () => {
    const labels = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`postern.tcp.s${i}.port`, '80']));
    const { services, problems } = servicesOfContainer(container('many', labels), regular);
    expect(services).toEqual([]);
    expect(problems[0]?.message).toContain('at most 16 per container');
  });
});

describe('reconciling labels with the gateway', () => {
  const web = (labels: Record<string, string> = {}, more: Partial<ContainerInfo> = {}) =>
    container('web', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080', ...labels }, more);

  it('publishes, disables when stopped, enables when started, replaces when relabelled, removes when gone; no duplicates', async () => {
    const gateway = fakeGateway();
    const first = await reconcileLabels(gateway.api, [web()], regular);
    expect(first.problems).toEqual([]);
    expect(gateway.rows.map((row) => [row.name, row.enabled])).toEqual([['web', true]]);
    // The agent restarted: the same containers change nothing.
    gateway.calls.length = 0;
    expect((await reconcileLabels(gateway.api, [web()], regular)).done).toEqual([]);
    expect(gateway.calls).toEqual([]);

    await reconcileLabels(gateway.api, [web({}, { running: false })], regular);
    expect(gateway.rows.map((row) => row.enabled)).toEqual([false]);
    await reconcileLabels(gateway.api, [web()], regular);
    expect(gateway.rows.map((row) => row.enabled)).toEqual([true]);

    await reconcileLabels(gateway.api, [web({ 'postern.http.path': '/v2' })], regular);
    expect(gateway.rows.map((row) => ('pathLocation' in row ? row.pathLocation : null))).toEqual(['/v2']);

    await reconcileLabels(gateway.api, [], regular);
    expect(gateway.rows).toEqual([]);
  });

  it("never touches the operator's services, and a label naming the same route is refused while others are served", async () => {
    const gateway = fakeGateway();
    const operators = gateway.operatorService('web', 'app.example.com');
    const other = container('blog', { 'postern.http.domain': 'blog.example.com', 'postern.http.port': '80' });
    const outcome = await reconcileLabels(gateway.api, [web(), other], regular);
    expect(outcome.problems).toEqual([
      { container: 'web', key: 'http', message: expect.stringContaining('already uses this domain') as string },
    ]);
    expect(gateway.rows.map((row) => [row.name, row.source?.container ?? 'operator'])).toEqual([
      ['web', 'operator'],
      ['blog', 'blog'],
    ]);
    // Container gone: the operator's service of the same name stays.
    await reconcileLabels(gateway.api, [], regular);
    expect(gateway.rows).toEqual([operators]);
  });

  it('two containers asking for the same route: the first is served, the second refused with a reason', async () => {
    const gateway = fakeGateway();
    const twin = container('web2', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080' });
    const outcome = await reconcileLabels(gateway.api, [web(), twin], regular);
    expect(gateway.rows.map((row) => row.source?.container)).toEqual(['web']);
    expect(outcome.problems.map((problem) => problem.container)).toEqual(['web2']);
    // The first goes: the route is free, the second is asked again at once (not after the refusal's pause).
    const refused: RefusedCreations = new Map();
    await reconcileLabels(gateway.api, [web(), twin], regular, { refused, now: 0 });
    const freed = await reconcileLabels(gateway.api, [twin], regular, { refused, now: 1 });
    expect(freed.freed).toBe(true);
    await reconcileLabels(gateway.api, [twin], regular, { refused, now: 2 });
    expect(gateway.rows.map((row) => row.source?.container)).toEqual(['web2']);
  });

  it("keeps the operator's decisions: a service it disabled stays disabled and is not deleted or replaced", async () => {
    const gateway = fakeGateway();
    await reconcileLabels(gateway.api, [web()], regular);
    const row = gateway.rows[0];
    if (!row) throw new Error('no service');
    row.enabled = false;
    row.disabledBy = 'admin';
    gateway.calls.length = 0;
    const running = await reconcileLabels(gateway.api, [web()], regular);
    expect(running.problems[0]?.message).toContain('the operator disabled it');
    const relabelled = await reconcileLabels(gateway.api, [web({ 'postern.http.path': '/v2' })], regular);
    expect(relabelled.problems[0]?.message).toContain('only the operator can delete it');
    const gone = await reconcileLabels(gateway.api, [], regular);
    expect(gone.problems[0]?.message).toContain('only the operator can delete it');
    // Not even asked: the agent knows the gateway would refuse.
    expect(gateway.calls).toEqual([]);
    expect(gateway.rows).toEqual([row]);
  });

  it('gives a service the access policy of its labels before serving it, updates it, and drops it with the labels', async () => {
    const gateway = fakeGateway({ domainProviderId: 7 });
    const settled: SettledAccess = new Map();
    const memory = { refused: new Map(), now: 0, access: settled };
    const guarded = web({ 'postern.http.access.allow-email': 'ann@corp.test' });
    const first = await reconcileLabels(gateway.api, [guarded], regular, memory);
    expect(first.problems).toEqual([]);
    // Created disabled, protected, then enabled: never served under the domain's policy alone.
    expect(gateway.calls).toEqual(['create http web disabled', 'access 1 protected', 'enable 1']);
    expect(gateway.access.get(1)).toMatchObject({
      setBy: 'node',
      own: { providerId: 7, allowEmails: ['ann@corp.test'] },
    });
    expect(gateway.rows.map((row) => row.enabled)).toEqual([true]);

    // Nothing changed: nothing is sent, not even after an agent restart (a fresh memory reads and finds it equal).
    gateway.calls.length = 0;
    await reconcileLabels(gateway.api, [guarded], regular, memory);
    await reconcileLabels(gateway.api, [guarded], regular);
    expect(gateway.calls).toEqual([]);

    // Changed labels change the policy of the same service (no replacement: its id and share links stay).
    await reconcileLabels(gateway.api, [web({ 'postern.http.access': 'public' })], regular, memory);
    expect(gateway.calls).toEqual(['access 1 public']);
    expect(gateway.rows.map((row) => row.id)).toEqual([1]);
    expect(gateway.access.get(1)?.own.mode).toBe('public');

    // Labels gone: back to the domain's policy.
    gateway.calls.length = 0;
    const cleared = await reconcileLabels(gateway.api, [web()], regular, memory);
    expect(gateway.calls).toEqual(['access 1 inherit']);
    expect(gateway.access.has(1)).toBe(false);
    expect(cleared.done.join('\n')).toContain('its access labels are gone');
  });

  it('reports a policy the operator set, once per change, never undoes it, and a refused policy keeps the service unserved', async () => {
    const gateway = fakeGateway();
    const settled: SettledAccess = new Map();
    const memory = { refused: new Map(), now: 0, access: settled };
    await reconcileLabels(gateway.api, [web()], regular, memory);
    gateway.access.set(1, { setBy: 'admin', own: policy({ passwordSet: true }) });
    // Labels without a policy leave the operator's alone, silently.
    settled.clear();
    expect((await reconcileLabels(gateway.api, [web()], regular, memory)).problems).toEqual([]);
    // Labels asking for another: the gateway refuses, the agent reports it and carries on with the others.
    gateway.calls.length = 0;
    const blog = container('blog', {
      'postern.http.domain': 'blog.example.com',
      'postern.http.port': '80',
      'postern.http.access.sso-provider': '99',
      'postern.http.access.allow-group': 'ops',
    });
    const asked = [web({ 'postern.http.access': 'public' }), blog];
    const outcome = await reconcileLabels(gateway.api, asked, regular, memory);
    expect(outcome.problems).toEqual([
      { container: 'web', key: 'http', message: expect.stringContaining('kept as the operator set it') as string },
      {
        container: 'blog',
        key: 'http',
        message: expect.stringContaining(
          `postern.http.access.sso-provider: ${accessMessages.providerNotFound}`,
        ) as string,
      },
    ]);
    expect(gateway.access.get(1)?.setBy).toBe('admin');
    // The policy its labels ask for was refused: the new service stays disabled rather than served without it.
    expect(gateway.rows.map((row) => [row.name, row.enabled])).toEqual([
      ['web', true],
      ['blog', false],
    ]);
    // The next passes say the same and do not ask again until the labels change.
    gateway.calls.length = 0;
    const again = await reconcileLabels(gateway.api, asked, regular, memory);
    expect(again.problems).toEqual(outcome.problems);
    expect(gateway.calls).toEqual([]);
    // Fixed labels: applied, and the service is served.
    const fixed = container('blog', { ...blog.labels, 'postern.http.access.sso-provider': '7' });
    expect((await reconcileLabels(gateway.api, [asked[0] ?? web(), fixed], regular, memory)).problems).toHaveLength(1);
    expect(gateway.rows.map((row) => row.enabled)).toEqual([true, true]);
  });

  it('a hostile container does not stop the others', async () => {
    const gateway = fakeGateway();
    const evil = container('evil', { 'postern.http.domain': 'x.example.com;\n}', 'postern.http.port': '1' });
    const outcome = await reconcileLabels(gateway.api, [evil, web()], regular);
    expect(gateway.rows.map((row) => row.name)).toEqual(['web']);
    expect(outcome.problems.map((problem) => problem.container)).toEqual(['evil']);
  });

  it('thousands of labelled containers: the quota is served, the rest reported, and refusals are not asked again at every pass', async () => {
    const gateway = fakeGateway({ maxServices: 50 });
    const many = Array.from({ length: 2000 }, (_, i) =>
      container(`c${i}`, { 'postern.http.domain': `c${i}.example.com`, 'postern.http.port': '80' }),
    );
    const refused: RefusedCreations = new Map();
    const first = await reconcileLabels(gateway.api, many, regular, { refused, now: 0 });
    expect(gateway.rows).toHaveLength(50);
    expect(first.problems).toHaveLength(1950);
    expect(first.problems[0]?.message).toContain('limit of services');
    gateway.calls.length = 0;
    const again = await reconcileLabels(gateway.api, many, regular, { refused, now: 1000 });
    expect(gateway.calls).toEqual([]);
    expect(again.problems).toHaveLength(1950);
    await reconcileLabels(gateway.api, many, regular, { refused, now: RETRY_REFUSED_MS + 1 });
    expect(gateway.calls).toHaveLength(1950);
    // Checking 2000 containers' labels takes a second or two; a loaded machine may take several.
  }, 30_000);
});

describe('the label watcher', () => {
  it('says once that the engine is away and waits longer each time', async () => {
    const gateway = fakeGateway();
    const system = createFakeSystem({ hasKernelWireguard: false });
    let lists = 0;
    const engine: DockerEngine = {
      listContainers: () => {
        lists += 1;
        return lists <= 5 ? Promise.reject(new Error('connect ENOENT /var/run/docker.sock')) : Promise.resolve([]);
      },
      watch: (_, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve())),
    };
    const stop = new AbortController();
    let log = '';
    const started = system.now();
    const watching = runLabelWatcher({
      engine,
      api: {
        ...gateway.api,
        getNode: () => (lists >= 6 ? Promise.reject(new TokenRejectedError('revoked')) : Promise.resolve(makeNode())),
        reportLabelProblems: () => Promise.resolve(),
      },
      system,
      log: { write: (text) => (log += text) },
      signal: stop.signal,
      configDir: '/cfg',
      resyncMs: 60_000,
    });
    await expect(watching).rejects.toThrow('revoked');
    stop.abort();
    expect(log.match(/ENOENT/g)).toHaveLength(1);
    // 2 + 4 + 8 + 16 + 32 s between the six attempts (the fake clock), not 5 × 2 s.
    expect(system.now() - started).toBeGreaterThanOrEqual(62_000);
  });

  it('logs each problem once, keeps them for `postern status` and the console, and stops on a refused token', async () => {
    const gateway = fakeGateway();
    const system = createFakeSystem({ hasKernelWireguard: false });
    const containers = [
      container('web', { 'postern.http.domain': 'app.example.com', 'postern.http.port': '8080' }),
      container('evil', { 'postern.http.domain': 'x;y', 'postern.http.port': '80' }),
    ];
    const engine: DockerEngine = {
      listContainers: () => Promise.resolve(containers),
      watch: (_, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve())),
    };
    let passes = 0;
    const reports: LabelProblemReport[][] = [];
    const stop = new AbortController();
    let log = '';
    const watching = runLabelWatcher({
      engine,
      api: {
        ...gateway.api,
        getNode: () => {
          passes += 1;
          if (passes === 4) return Promise.reject(new TokenRejectedError('revoked'));
          return Promise.resolve(makeNode());
        },
        // A gateway from before the report refuses it at first: said once, the services are published anyway.
        reportLabelProblems: (problems) => {
          reports.push(problems);
          return reports.length <= 2 ? Promise.reject(new CliError('Not found')) : Promise.resolve();
        },
      },
      system,
      log: { write: (text) => (log += text) },
      signal: stop.signal,
      configDir: '/cfg',
      resyncMs: 60_000,
    });
    await expect(watching).rejects.toThrow('The gateway refused the access token: revoked');
    stop.abort();
    expect(passes).toBe(4);
    expect(gateway.rows.map((row) => row.name)).toEqual(['web']);
    expect(log.match(/container evil \(http\): postern.http.domain/g)).toHaveLength(1);
    expect(log).toContain('published http service 1 "web" (web/http) at https://app.example.com/');
    const state = JSON.parse(system.files.get('/cfg/labels.json')?.text ?? '{}') as { problems: unknown[] };
    expect(state.problems).toEqual([
      { container: 'evil', key: 'http', message: expect.stringContaining('postern.http.domain') as string },
    ]);
    // Each pass reports the same problems to the gateway, for the console's node page.
    expect(reports).toHaveLength(3);
    for (const sent of reports) expect(sent).toEqual(state.problems);
    expect(log.match(/did not take the report of these problems: Not found/g)).toHaveLength(1);
  });

  it('applies access labels once, and logs and reports a refused policy once while the others are served', async () => {
    const gateway = fakeGateway({ domainProviderId: 7 });
    const system = createFakeSystem({ hasKernelWireguard: false });
    const containers = [
      container('web', {
        'postern.http.domain': 'app.example.com',
        'postern.http.port': '8080',
        'postern.http.access.allow-email': 'ann@corp.test',
      }),
      container('blog', {
        'postern.http.domain': 'blog.example.com',
        'postern.http.port': '80',
        'postern.http.access.sso-provider': '99',
        'postern.http.access.allow-group': 'ops',
      }),
    ];
    const engine: DockerEngine = {
      listContainers: () => Promise.resolve(containers),
      watch: (_, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve())),
    };
    let passes = 0;
    const reports: LabelProblemReport[][] = [];
    const stop = new AbortController();
    let log = '';
    const watching = runLabelWatcher({
      engine,
      api: {
        ...gateway.api,
        getNode: () => {
          passes += 1;
          if (passes === 4) return Promise.reject(new TokenRejectedError('revoked'));
          return Promise.resolve(makeNode());
        },
        reportLabelProblems: (problems) => {
          reports.push(problems);
          return Promise.resolve();
        },
      },
      system,
      log: { write: (text) => (log += text) },
      signal: stop.signal,
      configDir: '/cfg',
      resyncMs: 60_000,
    });
    await expect(watching).rejects.toThrow('revoked');
    stop.abort();
    expect(gateway.calls.filter((call) => call.startsWith('access'))).toEqual([
      'access 1 protected',
      'access 2 protected',
    ]);
    expect(gateway.rows.map((row) => [row.name, row.enabled])).toEqual([
      ['web', true],
      ['blog', false],
    ]);
    expect(
      log.match(/container blog \(http\): .*postern.http.access.sso-provider: This identity provider/g),
    ).toHaveLength(1);
    expect(reports).toHaveLength(3);
    for (const sent of reports)
      expect(sent).toEqual([
        { container: 'blog', key: 'http', message: expect.stringContaining('access policy refused') as string },
      ]);
  });

  it('reports at most 200 problems, each one printable line within the gateway’s bounds', async () => {
    const gateway = fakeGateway();
    const system = createFakeSystem({ hasKernelWireguard: false });
    const many = Array.from({ length: 300 }, (_, i) =>
      container(`bad${i}`, { 'postern.http.domain': 'x;y', 'postern.http.port': '80' }),
    );
    const odd = container('\u0007evil\nname', { 'postern.http.port': '80' });
    const reports: LabelProblemReport[][] = [];
    const stop = new AbortController();
    const watching = runLabelWatcher({
      engine: {
        listContainers: () => Promise.resolve([odd, ...many]),
        watch: (_, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve())),
      },
      api: {
        ...gateway.api,
        getNode: () =>
          reports.length > 0 ? Promise.reject(new TokenRejectedError('done')) : Promise.resolve(makeNode()),
        reportLabelProblems: (problems) => {
          reports.push(problems);
          return Promise.resolve();
        },
      },
      system,
      log: { write: () => undefined },
      signal: stop.signal,
      configDir: '/cfg',
      resyncMs: 1000,
    });
    await expect(watching).rejects.toThrow('done');
    stop.abort();
    const sent = reports[0] ?? [];
    expect(sent).toHaveLength(200);
    expect(LabelProblemsUpdateSchema.safeParse({ problems: sent }).success).toBe(true);
    expect(sent[0]?.container).toBe('\\u0007evil\\nname');
  });
});
