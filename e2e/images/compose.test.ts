// docker-compose.yml as operators use it: valid for compose v2 (the compose-spec schema, which v2 validates
// against; v2 itself is not installable here) and run with compose v1 (Debian's docker-compose 1.29): up → healthy →
// console over HTTPS on the published 443 → down. Needs root and a Docker daemon (the test command starts one).
// deploy/compose/multi-gateway.yml is checked against the schema and by compose v1's `config` (it needs a postgres
// image, which no registry here serves, so it is not started).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { run, runAllowingFailure } from '../harness/exec.js';
import { currentRunId } from '../harness/ids.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';
import { docker, ensureImages, healthOf, repoRoot, sweepDocker, type Images } from '../harness/docker.js';
import { httpsRequest } from '../harness/https.js';
import { canRun, COMPOSE_V1 } from '../../apps/server/src/test/requirements.js';

interface ComposeService {
  image?: string;
  ports?: string[];
  labels?: Record<string, string>;
  environment?: Record<string, string>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, { labels?: Record<string, string> } | null>;
  networks?: Record<string, { labels?: Record<string, string> }>;
}

const composeText = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8');
const multiGatewayFile = 'deploy/compose/multi-gateway.yml';
const project = `${currentRunId()}compose`;
const publicHost = `${currentRunId()}-compose.test`;

/** The compose-spec JSON schema (the one compose v2 validates with), as dclint ships it. */
function composeSpecSchema(): object {
  const dclintDir = dirname(createRequire(import.meta.url).resolve('dclint/package.json'));
  return JSON.parse(readFileSync(join(dclintDir, 'schemas/compose.schema.json'), 'utf8')) as object;
}

/**
 * The compose file with only what a test must not do on a shared machine changed: host ports become ephemeral
 * ports on loopback (same container ports and count), the image is the one built from this checkout, and what
 * compose creates carries this run's label for the sweep. Everything else is the file operators get.
 */
function forThisRun(images: Images): ComposeFile {
  const file = parse(composeText) as ComposeFile;
  const label = { 'postern-e2e': currentRunId() };
  const gateway = file.services.gateway ?? {};
  gateway.image = images.gateway;
  gateway.labels = label;
  gateway.ports = (gateway.ports ?? []).map((mapping) => `127.0.0.1::${mapping.split(':').at(-1) ?? ''}`);
  file.volumes = Object.fromEntries(Object.keys(file.volumes ?? {}).map((name) => [name, { labels: label }]));
  file.networks = { default: { labels: label } };
  return file;
}

function compose(args: string[], timeoutMs = 120_000): Promise<string> {
  return run(COMPOSE_V1, ['--project-name', project, '--project-directory', repoRoot, '-f', composePath, ...args], {
    timeoutMs,
    env: { ...process.env, POSTERN_PUBLIC_HOST: publicHost },
  });
}

let workDir = '';
let composePath = '';
let file: ComposeFile;

describe('docker-compose.yml for compose v2', () => {
  it('matches the compose-spec schema, so compose v2 accepts it', () => {
    const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
    const validate = ajv.compile(composeSpecSchema());
    expect(validate(parse(composeText)), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('deploy/compose/multi-gateway.yml matches the compose-spec schema too', () => {
    const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
    const validate = ajv.compile(composeSpecSchema());
    const multi = parse(readFileSync(join(repoRoot, multiGatewayFile), 'utf8'), { merge: true }) as unknown;
    expect(validate(multi), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('the schema check rejects what v2 rejects', () => {
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(composeSpecSchema());
    expect(validate({ services: { gateway: { image: 'x', cap_add: 'NET_ADMIN' } } })).toBe(false);
    expect(validate({ services: { gateway: { image: 'x', restart_policy: 'always' } } })).toBe(false);
  });
});

// `config` reads files and the environment only: no daemon, no root. The test command installs compose v1.
describe.runIf(canRun('compose-v1'))('multi-gateway.yml with compose v1', () => {
  it('accepts deploy/compose/multi-gateway.yml as it is, and refuses it without a gateway address', async () => {
    const settings = {
      POSTERN_PUBLIC_HOST: publicHost,
      POSTERN_GW1_ADDRESS: '127.0.0.11',
      POSTERN_GW2_ADDRESS: '127.0.0.12',
      POSTERN_DB_PASSWORD: 'only-for-the-config-check',
    };
    const config = await run(COMPOSE_V1, ['-f', join(repoRoot, multiGatewayFile), 'config'], {
      env: { ...process.env, ...settings },
    });
    // What compose v1 will run: each gateway its own name and endpoint, the one key and database.
    const services = (parse(config) as { services: Record<string, { environment: Record<string, string> }> }).services;
    expect(services['gateway-1']?.environment).toMatchObject({
      POSTERN_GATEWAY_NAME: 'gw-1',
      POSTERN_WG_ENDPOINT: '127.0.0.11:51820',
      POSTERN_DATABASE_URL: 'postgres://postern:only-for-the-config-check@postgres:5432/postern',
      POSTERN_SECRET_KEY_FILE: '/run/secrets/postern-secret-key',
    });
    expect(services['gateway-2']?.environment).toMatchObject({
      POSTERN_GATEWAY_NAME: 'gw-2',
      POSTERN_WG_ENDPOINT: '127.0.0.12:51820',
    });
    const { POSTERN_GW2_ADDRESS: _unset, ...withoutSecond } = settings;
    const refused = await runAllowingFailure(
      COMPOSE_V1,
      ['-f', join(repoRoot, multiGatewayFile), 'config', '--quiet'],
      {
        env: { ...process.env, ...withoutSecond },
      },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('set POSTERN_GW2_ADDRESS');
  });
});

describe.runIf(canRun('docker', 'compose-v1'))('docker-compose.yml with compose v1 (docker-compose 1.29)', () => {
  beforeAll(async () => {
    const images = await ensureImages();
    workDir = mkdtempSync(join(tmpdir(), `${currentRunId()}-compose-`));
    composePath = join(workDir, 'docker-compose.yml');
    file = forThisRun(images);
    writeFileSync(composePath, stringify(file));
  }, 45 * 60_000);

  afterAll(async () => {
    if (composePath !== '')
      await runAllowingFailure(COMPOSE_V1, [
        '--project-name',
        project,
        '-f',
        composePath,
        'down',
        '--volumes',
        '--timeout',
        '5',
      ]);
    sweepDocker(currentRunId());
    if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
  });

  it('is accepted by compose v1 as it is (no v2-only keys), and refuses to start without POSTERN_PUBLIC_HOST', async () => {
    const original = join(repoRoot, 'docker-compose.yml');
    await run(COMPOSE_V1, ['-f', original, 'config', '--quiet'], {
      env: { ...process.env, POSTERN_PUBLIC_HOST: publicHost },
    });
    const { POSTERN_PUBLIC_HOST: _unset, ...withoutHost } = process.env;
    const refused = await runAllowingFailure(COMPOSE_V1, ['-f', original, 'config', '--quiet'], { env: withoutHost });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('set POSTERN_PUBLIC_HOST');
  });

  it('comes up healthy with one proxy process per published port, serves the console on 443, and goes down cleanly', async () => {
    await compose(['up', '--detach', '--no-build']);
    const container = (
      await docker(['ps', '--quiet', '--filter', `label=com.docker.compose.project=${project}`])
    ).trim();
    expect(container).toMatch(/^[0-9a-f]+$/);
    await waitFor(async () => (await healthOf(container)) === 'healthy', {
      timeoutMs: 90_000,
      what: 'the compose gateway to turn healthy',
    });

    // docker-proxy processes serving this container: one per published port and protocol, a handful, not hundreds.
    const ip = (
      await docker(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', container])
    ).trim();
    const proxies = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((args) => args.includes('docker-proxy') && args.includes(`-container-ip ${ip} `));
    // Every published container port, a range counting as its number of ports.
    const published = (file.services.gateway?.ports ?? [])
      .map((mapping) => /(\d+)(?:-(\d+))?(?:\/\w+)?$/.exec(mapping) ?? [])
      .reduce((sum, [, low = '0', high]) => sum + (high === undefined ? 1 : Number(high) - Number(low) + 1), 0);
    expect(proxies).toHaveLength(published);
    expect(published).toBeLessThanOrEqual(30);

    const https = (await docker(['port', container, '443/tcp'])).trim().split('\n')[0] ?? '';
    const [, port = ''] = /:(\d+)$/.exec(https) ?? [];
    const answer = await waitFor(
      async () => {
        const reply = await httpsRequest({ address: '127.0.0.1', port: Number(port), host: publicHost }, '/api/health');
        return reply.status === 200 ? reply : undefined;
      },
      { timeoutMs: 30_000, what: 'the console on the published 443' },
    );
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'ok' });

    await compose(['down', '--volumes', '--timeout', '10']);
    const left = await docker(['ps', '--all', '--quiet', '--filter', `label=com.docker.compose.project=${project}`]);
    const volumes = await docker([
      'volume',
      'ls',
      '--quiet',
      '--filter',
      `label=com.docker.compose.project=${project}`,
    ]);
    expect(left + volumes).toBe('');
  });
});
