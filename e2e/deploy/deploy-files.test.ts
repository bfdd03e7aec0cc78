// Checks of the packaging files as far as a machine without Docker, Kubernetes or Helm allows: the YAML parses, the
// Dockerfiles copy only files that exist in the build context, the shell scripts pass shellcheck, every chart value
// is documented, the compose file publishes what the gateway needs. Needs shellcheck, not root.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  findKeysMissingFromReadme,
  findTemplateProblems,
  findUndefinedReferences,
  findUndocumentedKeys,
  findUnusedValues,
  isIgnoredByDockerignore,
  listCopySources,
  listStageNames,
  listValueReferences,
  parseDockerfile,
  toParsableYaml,
} from './deploy-checks.js';

const execFileAsync = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const charts = ['postern-gateway', 'postern-node'];
const dockerfiles = ['deploy/gateway.Dockerfile', 'deploy/node.Dockerfile'];
/**
 * COPY sources that are build output of the host, by the script that makes them (their COPY tolerates their absence:
 * a bracket in each name).
 */
const BUILT_BEFORE_THE_IMAGE: Record<string, string> = { 'apps/cli/dis[t]/releas[e]': 'scripts/build-node-client.sh' };

function read(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}

function listFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function isShellScript(path: string): boolean {
  if (path.endsWith('.sh')) return true;
  const firstLine = read(path).split('\n', 1)[0] ?? '';
  return /^#!.*\b(sh|bash)\b/.test(firstLine);
}

interface K8sDoc {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: unknown };
  spec?: Record<string, unknown>;
}

function parseTemplate(path: string): K8sDoc[] {
  const docs = parseAllDocuments(toParsableYaml(read(path)));
  for (const doc of docs) expect(doc.errors, `${path}: ${doc.errors.join('; ')}`).toEqual([]);
  return docs.map((doc) => doc.toJS() as K8sDoc | null).filter((doc) => doc !== null);
}

// Returns the first container of the chart's workload (the gateway's StatefulSet, the node's Deployment), as the
// template renders it with placeholders.
function readWorkloadContainer(chart: string): Record<string, unknown> {
  const [file, kind] =
    chart === 'postern-gateway' ? ['statefulset.yaml', 'StatefulSet'] : ['deployment.yaml', 'Deployment'];
  const workload = parseTemplate(`deploy/helm/${chart}/templates/${file}`).find((doc) => doc.kind === kind);
  const podSpec = (workload?.spec?.template as { spec?: { containers?: Record<string, unknown>[] } }).spec;
  const container = podSpec?.containers?.[0];
  if (!container) throw new Error(`${chart}: ${kind} without a container`);
  return container;
}

describe('YAML files', () => {
  const plainYaml = ['docker-compose.yml', ...listFiles('deploy').filter((path) => /\.ya?ml$/.test(path))].filter(
    (path) => !path.includes('/templates/'),
  );

  it.each(plainYaml)('%s parses', (path) => {
    const docs = parseAllDocuments(read(path));
    expect(docs.flatMap((doc) => doc.errors.map((error) => error.message))).toEqual([]);
  });

  it.each(charts)(
    '%s: every template parses once its actions are replaced, and has apiVersion, kind, name',
    (chart) => {
      const templates = listFiles(`deploy/helm/${chart}/templates`).filter((path) => path.endsWith('.yaml'));
      expect(templates.length).toBeGreaterThan(0);
      for (const path of templates) {
        for (const doc of parseTemplate(path)) {
          expect(doc.apiVersion, path).toEqual(expect.any(String));
          expect(doc.kind, path).toEqual(expect.any(String));
          expect(doc.metadata?.name, path).toBeDefined();
        }
      }
    },
  );

  it.each(charts)('%s: every template action is closed and every block ends', (chart) => {
    for (const path of listFiles(`deploy/helm/${chart}/templates`)) {
      expect(findTemplateProblems(read(path)), path).toEqual([]);
    }
  });

  it.each(charts)('%s: Chart.yaml names the chart and has a version', (chart) => {
    const meta = parse(read(`deploy/helm/${chart}/Chart.yaml`)) as Record<string, unknown>;
    expect(meta).toMatchObject({ apiVersion: 'v2', name: chart, version: expect.any(String) });
  });
});

describe('chart values', () => {
  it.each(charts)('%s: every key in values.yaml has a comment line directly above it', (chart) => {
    expect(findUndocumentedKeys(read(`deploy/helm/${chart}/values.yaml`))).toEqual([]);
  });

  it.each(charts)('%s: every key in values.yaml is in the README values table', (chart) => {
    const values = read(`deploy/helm/${chart}/values.yaml`);
    expect(findKeysMissingFromReadme(values, read(`deploy/helm/${chart}/README.md`))).toEqual([]);
  });

  it.each(charts)('%s: templates use only defined values, and every value is used', (chart) => {
    const values = read(`deploy/helm/${chart}/values.yaml`);
    const refs = listFiles(`deploy/helm/${chart}/templates`).flatMap((path) => listValueReferences(read(path)));
    expect(findUndefinedReferences(values, refs)).toEqual([]);
    expect(findUnusedValues(values, refs)).toEqual([]);
  });
});

describe('charts', () => {
  it('the gateway runs with NET_ADMIN, /data on a volume, exec probes of the healthcheck and a Secret for the password', () => {
    const container = readWorkloadContainer('postern-gateway');
    expect(container).toMatchObject({
      securityContext: { capabilities: { add: ['NET_ADMIN'] } },
      volumeMounts: expect.arrayContaining([{ name: 'data', mountPath: '/data' }]),
    });
    // The control plane listens on loopback (POSTERN_HOST): an httpGet probe on the pod address would find nothing.
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect(container[probe], probe).toMatchObject({ exec: { command: ['node', '/app/deploy/healthcheck.mjs'] } });
    }
    const env = container.env as { name: string; value?: unknown; valueFrom?: unknown }[];
    expect(env.find(({ name }) => name === 'POSTERN_HOST')).toEqual({ name: 'POSTERN_HOST', value: '127.0.0.1' });
    expect(env.find(({ name }) => name === 'POSTERN_ADMIN_PASSWORD')).toMatchObject({
      valueFrom: { secretKeyRef: {} },
    });
    const secrets = parseTemplate('deploy/helm/postern-gateway/templates/secret.yaml');
    expect(secrets.map((doc) => doc.kind)).toEqual(['Secret']);
    const pvcs = parseTemplate('deploy/helm/postern-gateway/templates/pvc.yaml');
    expect(pvcs.map((doc) => doc.kind)).toEqual(['PersistentVolumeClaim']);
  });

  it('the gateway Service publishes 80, 443, WireGuard over UDP and the TCP/UDP range', () => {
    const services = parseTemplate('deploy/helm/postern-gateway/templates/service.yaml');
    const ports = (services[0]?.spec?.ports ?? []) as { name: string; port: unknown; protocol: string }[];
    expect(ports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'http', port: 80, protocol: 'TCP' }),
        expect.objectContaining({ name: 'https', port: 443, protocol: 'TCP' }),
        expect.objectContaining({ name: 'wireguard', protocol: 'UDP' }),
        expect.objectContaining({ name: 'tcp-TEMPLATE', protocol: 'TCP' }),
        expect.objectContaining({ name: 'udp-TEMPLATE', protocol: 'UDP' }),
      ]),
    );
    expect(read('deploy/helm/postern-gateway/templates/service.yaml')).toMatch(/range .*tcpPortRange\.start/);
  });

  it('the node client runs with NET_ADMIN only, the token from a Secret and `postern status --health` probes', () => {
    const container = readWorkloadContainer('postern-node');
    expect(container).toMatchObject({
      securityContext: { capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] } },
      volumeMounts: expect.arrayContaining([{ name: 'tun', mountPath: '/dev/net/tun' }]),
    });
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect(container[probe], probe).toMatchObject({ exec: { command: ['postern', 'status', '--health'] } });
    }
    const env = container.env as { name: string; valueFrom?: unknown }[];
    expect(env.find(({ name }) => name === 'POSTERN_TOKEN')).toMatchObject({ valueFrom: { secretKeyRef: {} } });
  });

  it.each(charts)('%s has NOTES.txt and a README', (chart) => {
    expect(existsSync(join(repoRoot, `deploy/helm/${chart}/templates/NOTES.txt`))).toBe(true);
    expect(existsSync(join(repoRoot, `deploy/helm/${chart}/README.md`))).toBe(true);
  });
});

describe('Dockerfiles', () => {
  it.each(dockerfiles)('%s copies only files that exist in the build context (the repo root)', (dockerfile) => {
    const instructions = parseDockerfile(read(dockerfile));
    const ignore = read(`${dockerfile}.dockerignore`);
    const stages = listStageNames(instructions);
    const sources = listCopySources(instructions);
    expect(sources.length).toBeGreaterThan(0);
    for (const { path, line, fromStage } of sources) {
      if (fromStage !== undefined) {
        expect(stages, `line ${line}: --from=${fromStage}`).toContain(fromStage);
        continue;
      }
      // Made before the image by a script build-images.sh runs (and the release workflow); absent in a plain clone.
      const builder = BUILT_BEFORE_THE_IMAGE[path];
      if (builder !== undefined) expect(read('scripts/build-images.sh'), `line ${line}: ${path}`).toContain(builder);
      else expect(existsSync(join(repoRoot, path)), `line ${line}: ${path} does not exist`).toBe(true);
      if (path !== '.') expect(isIgnoredByDockerignore(ignore, path), `line ${line}: ${path} is ignored`).toBe(false);
    }
  });

  it.each(dockerfiles)('%s installs system packages through scripts/install-deps.sh', (dockerfile) => {
    const runs = parseDockerfile(read(dockerfile)).filter(({ keyword }) => keyword === 'RUN');
    expect(runs.some(({ args }) => /bash \S*install-deps\.sh --/.test(args))).toBe(true);
    expect(runs.some(({ args }) => /apt-get install/.test(args))).toBe(false);
  });

  it('the gateway image exposes its public ports only, keeps data in /data and checks /api/health on loopback', () => {
    const instructions = parseDockerfile(read('deploy/gateway.Dockerfile'));
    const argsOf = (keyword: string): string[] =>
      instructions.filter((instruction) => instruction.keyword === keyword).map(({ args }) => args);
    expect(argsOf('EXPOSE').join(' ').split(/\s+/)).toEqual(['80', '443', '8443', '51820/udp']);
    expect(argsOf('ENV').join(' ')).toMatch(/\bPOSTERN_HOST=127\.0\.0\.1\b/);
    expect(argsOf('VOLUME').join(' ')).toContain('/data');
    expect(argsOf('HEALTHCHECK')).toHaveLength(1);
    // PID 1 must reap orphans of the supervised nginx and wireguard-go: tini, installed by the image's deps mode.
    expect(argsOf('ENTRYPOINT')).toEqual(['["/usr/bin/tini", "--"]']);
    expect(read('scripts/install-deps.sh')).toMatch(/--gateway-image\) pkgs=\([^)]*image_init_pkgs/);
    expect(read('scripts/install-deps.sh')).toContain('image_init_pkgs=(tini)');
    expect(read('deploy/healthcheck.mjs')).toContain('/api/health');
    // No "# syntax=" directive: it makes BuildKit pull a frontend image, and no registry may be reachable.
    for (const dockerfile of dockerfiles) expect(read(dockerfile)).not.toMatch(/^#\s*syntax=/m);
  });
});

describe('shell scripts', () => {
  const scripts = [...listFiles('deploy'), ...listFiles('scripts')].filter(isShellScript);

  it('there are scripts to check', () => {
    expect(scripts).toEqual(expect.arrayContaining(['deploy/node-entrypoint.sh', 'scripts/install-deps.sh']));
  });

  it.each(scripts)('%s passes shellcheck', async (path) => {
    const result = await execFileAsync('shellcheck', ['--format=gcc', path], { cwd: repoRoot }).then(
      () => '',
      (error: unknown) => (error as { stdout?: string }).stdout ?? String(error),
    );
    expect(result).toBe('');
  });
});

describe('docker-compose.yml', () => {
  interface ComposeService {
    build?: { dockerfile?: string };
    ports?: string[];
    volumes?: string[];
    cap_add?: string[];
    devices?: string[];
    environment?: Record<string, string | null>;
  }
  const compose = parse(read('docker-compose.yml')) as {
    services: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
  const gateway = compose.services.gateway ?? {};

  it('builds the gateway image from the gateway Dockerfile', () => {
    expect(gateway.build?.dockerfile).toBe('deploy/gateway.Dockerfile');
  });

  it('publishes 80, 443, WireGuard over UDP and the TCP range the gateway is configured with', () => {
    expect(gateway.ports).toEqual(expect.arrayContaining(['80:80', '443:443', '51820:51820/udp']));
    const range = gateway.environment?.POSTERN_TCP_PORT_RANGE;
    expect(range).toMatch(/^\d+-\d+$/);
    expect(gateway.ports).toContain(`${range}:${range}`);
  });

  it('keeps the control plane on loopback like the image, systemd unit and chart, and publishes no port to it', () => {
    expect(gateway.environment?.POSTERN_HOST).toBe('127.0.0.1');
    expect(gateway.ports?.filter((mapping) => /(^|:)3000(\/|$)/.test(mapping))).toEqual([]);
  });

  it('keeps /data on a named volume and grants NET_ADMIN and /dev/net/tun', () => {
    const dataVolume = gateway.volumes?.find((volume) => volume.endsWith(':/data'));
    const volumeName = dataVolume?.split(':')[0] ?? '';
    expect(Object.keys(compose.volumes ?? {})).toContain(volumeName);
    expect(gateway.cap_add).toContain('NET_ADMIN');
    expect(gateway.devices?.some((device) => device.startsWith('/dev/net/tun'))).toBe(true);
  });
});

describe('deploy/compose/multi-gateway.yml (several gateways on one PostgreSQL)', () => {
  interface ComposeService {
    image?: string;
    ports?: string[];
    volumes?: string[];
    secrets?: string[];
    depends_on?: Record<string, { condition?: string }>;
    environment?: Record<string, string>;
  }
  // The YAML merge keys (<<) are resolved as compose resolves them.
  const compose = parse(read('deploy/compose/multi-gateway.yml'), { merge: true }) as {
    services: Record<string, ComposeService>;
    secrets?: Record<string, { file?: string }>;
    volumes?: Record<string, unknown>;
  };
  const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway-'));
  const envOf = (name: string) => compose.services[name]?.environment ?? {};

  it('runs two or more gateways beside one PostgreSQL they wait for', () => {
    expect(gateways.length).toBeGreaterThanOrEqual(2);
    expect(compose.services.postgres?.image).toMatch(/^postgres:/);
    for (const [name, service] of gateways) {
      expect(service.depends_on, name).toEqual({ postgres: { condition: 'service_healthy' } });
      expect(envOf(name).POSTERN_DATABASE_URL, name).toMatch(
        /^postgres:\/\/postern:\$\{POSTERN_DB_PASSWORD:\?[^}]+\}@postgres:5432\/postern$/,
      );
    }
    expect(envOf('postgres').POSTGRES_PASSWORD).toMatch(/^\$\{POSTERN_DB_PASSWORD:\?/);
  });

  it('every gateway reads the one secret key from a compose secret', () => {
    expect(compose.secrets?.['postern-secret-key']).toEqual({ file: './secret.key' });
    for (const [name, service] of gateways) {
      expect(service.secrets, name).toEqual(['postern-secret-key']);
      expect(envOf(name).POSTERN_SECRET_KEY_FILE, name).toBe('/run/secrets/postern-secret-key');
    }
    for (const ignore of ['deploy/gateway.Dockerfile.dockerignore', 'deploy/node.Dockerfile.dockerignore'])
      expect(isIgnoredByDockerignore(read(ignore), 'deploy/compose/secret.key'), ignore).toBe(true);
  });

  it('each gateway has its own name, WireGuard endpoint, published address and data volume', () => {
    const distinct = (values: unknown[]) => new Set(values).size === values.length;
    const names = gateways.map(([name]) => envOf(name).POSTERN_GATEWAY_NAME);
    const endpoints = gateways.map(([name]) => envOf(name).POSTERN_WG_ENDPOINT);
    for (const gatewayName of names) expect(gatewayName).toMatch(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    expect(distinct(names)).toBe(true);
    expect(distinct(endpoints)).toBe(true);
    for (const [name, service] of gateways) {
      // The WireGuard port is published on the address the endpoint names, so nodes reach this gateway there.
      const address = /^\$\{(\w+):\?[^}]*\}:51820$/.exec(envOf(name).POSTERN_WG_ENDPOINT ?? '')?.[1];
      expect(address, name).toBeDefined();
      expect(service.ports, name).toContain(`\${${address ?? ''}:?set ${address ?? ''}}:51820:51820/udp`);
      expect(
        service.ports?.filter((mapping) => /(^|:)3000(\/|$)/.test(mapping)),
        name,
      ).toEqual([]);
      expect(envOf(name).POSTERN_HOST, name).toBe('127.0.0.1');
    }
    const dataVolumes = gateways.map(([, service]) => service.volumes?.find((volume) => volume.endsWith(':/data')));
    expect(distinct(dataVolumes)).toBe(true);
    for (const volume of dataVolumes) expect(Object.keys(compose.volumes ?? {})).toContain(volume?.split(':')[0]);
  });
});

describe('systemd units', () => {
  const units = listFiles('deploy/systemd').filter((path) => path.endsWith('.service'));

  it('the node unit runs `postern connect --daemon` and always restarts it', () => {
    const unit = read('deploy/systemd/postern-node.service');
    expect(unit).toMatch(/^ExecStart=\S*postern connect --daemon$/m);
    expect(unit).toMatch(/^Restart=always$/m);
  });

  it('the gateway unit keeps the control plane on loopback', () => {
    expect(read('deploy/systemd/postern-gateway.service')).toMatch(/^Environment=.*\bPOSTERN_HOST=127\.0\.0\.1\b/m);
  });

  it.each(units)('%s has [Unit], [Service] with an absolute ExecStart, and [Install]', (path) => {
    const unit = read(path);
    for (const section of ['[Unit]', '[Service]', '[Install]']) expect(unit).toContain(section);
    expect(unit).toMatch(/^ExecStart=\//m);
    expect(relative('deploy/systemd', path)).toMatch(/^postern-(node|gateway)\.service$/);
  });
});

describe('release workflow', () => {
  const workflow = '.github/workflows/release.yml';
  const validator = join(repoRoot, 'node_modules/.bin/action-validator');

  it('passes the workflow linter (the lint step runs it too), which refuses a broken copy', async () => {
    await execFileAsync(validator, [workflow], { cwd: repoRoot });
    const broken = join(mkdtempSync(join(tmpdir(), 'postern-workflow-')), 'release.yml');
    writeFileSync(broken, read(workflow).replace('runs-on: ubuntu-24.04', 'runs_on: ubuntu-24.04'));
    await expect(execFileAsync(validator, [broken])).rejects.toThrow();
    expect(JSON.parse(read('package.json')).scripts.lint).toContain('lint:workflows');
  });

  it('builds with the scripts the test command uses, for amd64 and arm64, and publishes checksums', () => {
    const text = read(workflow);
    for (const script of [
      'scripts/build-node-client.sh',
      'scripts/build-images.sh --push',
      'scripts/package-charts.sh',
    ])
      expect(text).toContain(`bash ${script}`);
    expect(read('scripts/test.sh')).toContain('bash scripts/build-node-client.sh');
    expect(read('scripts/build-images.sh')).toContain('--platform linux/amd64,linux/arm64 --push');
    expect(read('e2e/deploy/helm.test.ts')).toContain('scripts/package-charts.sh');
    expect(text).toContain('sha256sum');
  });
});
