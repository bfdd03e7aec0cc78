import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runAllowingFailure, type RunResult } from './exec.js';
import { currentRunId } from './ids.js';

// Docker for the image tests: Debian's client (a newer one without buildx may come first in PATH) with BuildKit,
// argv arrays only. Everything a run creates (containers, networks, volumes) carries the label postern-e2e=<run id>
// and a name starting with the run id, so a sweep removes exactly what this run made.

export const DOCKER = '/usr/bin/docker';
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LABEL = 'postern-e2e';
const dockerEnv = { ...process.env, DOCKER_BUILDKIT: '1' };

export function docker(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  return run(DOCKER, args, { timeoutMs, env: dockerEnv });
}

export function dockerAllowingFailure(args: readonly string[], timeoutMs = 60_000): Promise<RunResult> {
  return runAllowingFailure(DOCKER, args, { timeoutMs, env: dockerEnv });
}

/** Whether a Docker daemon answers; the test command starts one (scripts/test.sh). */
export function isDockerUp(): boolean {
  try {
    execFileSync(DOCKER, ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** `--label postern-e2e=<run id>`, for every container, network and volume a test creates. */
export function runLabel(): string[] {
  return ['--label', `${LABEL}=${currentRunId()}`];
}

/** A name for something this run creates: run id, then `role`. */
export function runName(role: string): string {
  return `${currentRunId()}-${role}`;
}

/** Removes the containers, networks and volumes labelled with `runId` (synchronous: usable from teardown). */
export function sweepDocker(runId: string): string[] {
  const filter = ['--filter', `label=${LABEL}=${runId}`];
  const list = (args: string[]): string[] => {
    try {
      return execFileSync(DOCKER, [...args, ...filter], { encoding: 'utf8', timeout: 30_000 })
        .split('\n')
        .filter(Boolean);
    } catch {
      return [];
    }
  };
  const removed: string[] = [];
  const remove = (args: string[], ids: string[]): void => {
    if (ids.length === 0) return;
    try {
      execFileSync(DOCKER, [...args, ...ids], { stdio: 'ignore', timeout: 60_000 });
      removed.push(...ids);
    } catch {
      // Reported by the caller's next look; nothing else to do from a teardown.
    }
  };
  remove(['rm', '-f', '-v'], list(['ps', '-a', '--format', '{{.Names}}']));
  remove(['network', 'rm'], list(['network', 'ls', '--format', '{{.Name}}']));
  remove(['volume', 'rm', '-f'], list(['volume', 'ls', '--format', '{{.Name}}']));
  return removed;
}

export interface Images {
  gateway: string;
  node: string;
}

/**
 * The images under test, built from this checkout by scripts/build-images.sh. The test command builds them once
 * per run (in the background, while other suites run) and says so with POSTERN_E2E_IMAGES_BUILT=<tag>; a test file
 * run on its own builds them itself (BuildKit's cache makes an unchanged rebuild take seconds).
 */
export async function ensureImages(): Promise<Images> {
  const tag = process.env.POSTERN_E2E_IMAGE_TAG ?? 'latest';
  const images = { gateway: `postern-e2e/gateway:${tag}`, node: `postern-e2e/node:${tag}` };
  if (process.env.POSTERN_E2E_IMAGES_BUILT !== tag) {
    await run('bash', [resolve(repoRoot, 'scripts/build-images.sh'), '--tag', tag], {
      timeoutMs: 40 * 60_000,
      env: dockerEnv,
    });
  }
  for (const image of Object.values(images)) await docker(['image', 'inspect', '--format', '{{.Id}}', image]);
  return images;
}

export async function containerIp(name: string): Promise<string> {
  const ip = (
    await docker(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', name])
  ).trim();
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) throw new Error(`container ${name} has no IPv4 address (got "${ip}")`);
  return ip;
}

/** Docker's health state of a container: starting, healthy or unhealthy. */
export async function healthOf(name: string): Promise<string> {
  return (await docker(['inspect', '--format', '{{.State.Health.Status}}', name])).trim();
}

export async function logsOf(name: string): Promise<string> {
  const result = await dockerAllowingFailure(['logs', name]);
  return result.stdout + result.stderr;
}
