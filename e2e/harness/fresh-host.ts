import { resolve } from 'node:path';
import { docker, dockerAllowingFailure, repoRoot, runLabel } from './docker.js';
import { runAllowingFailure, type RunResult } from './exec.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// A fresh Debian 12 machine as a container (e2e/images/fresh-debian.Dockerfile): systemd as PID 1, so a service the
// installer enables comes back after `docker restart`, as after a reboot. Measured on this machine (Docker 20.10,
// cgroup v1, systemd 252): systemd boots with the cgroup tree mounted read-only and a tmpfs /run; the installed
// unit's sandboxing (ProtectSystem, PrivateTmp, ProtectHome) needs CAP_SYS_ADMIN to set up its mount namespace;
// WireGuard runs as wireguard-go on /dev/net/tun (this kernel has no WireGuard module).

export const FRESH_DEBIAN_IMAGE = 'postern-e2e/fresh-debian:latest';

/** Builds the image FROM the locally made base image (scripts/make-base-images.sh); Docker's cache makes it ~1 s. */
export async function ensureFreshDebianImage(): Promise<string> {
  await docker(
    [
      'build',
      '-q',
      '-f',
      resolve(repoRoot, 'e2e/images/fresh-debian.Dockerfile'),
      '-t',
      FRESH_DEBIAN_IMAGE,
      resolve(repoRoot, 'e2e/images'),
    ],
    10 * 60_000,
  );
  return FRESH_DEBIAN_IMAGE;
}

export async function startFreshHost(name: string, network: string): Promise<void> {
  await docker([
    'run',
    '-d',
    '--name',
    name,
    '--hostname',
    name,
    '--network',
    network,
    ...runLabel(),
    '--cap-add',
    'NET_ADMIN',
    '--cap-add',
    'SYS_ADMIN',
    '--device',
    '/dev/net/tun',
    '--tmpfs',
    '/run',
    '--tmpfs',
    '/run/lock',
    '-v',
    '/sys/fs/cgroup:/sys/fs/cgroup:ro',
    FRESH_DEBIAN_IMAGE,
  ]);
  await waitForBoot(name);
}

/** systemd has started what it starts at boot (`degraded` counts: a unit of the image may fail in a container). */
export async function waitForBoot(name: string): Promise<void> {
  await waitFor(
    async () => {
      const { stdout } = await dockerAllowingFailure(['exec', name, 'systemctl', 'is-system-running']);
      return ['running', 'degraded'].includes(stdout.trim());
    },
    { timeoutMs: 60_000, what: `systemd in ${name} to finish booting` },
  );
}

/**
 * Types `commandLine` into a login shell of the host, as an operator pastes it: the shell reads it from its input,
 * so no process gets the line as an argument. With `traceFile`, strace records every program started meanwhile
 * with its arguments.
 */
export function runAsTyped(name: string, commandLine: string, traceFile?: string): Promise<RunResult> {
  const shell = traceFile
    ? ['strace', '-f', '--seccomp-bpf', '-qq', '-s', '4096', '-e', 'trace=execve', '-o', traceFile, 'sh']
    : ['sh'];
  return runAllowingFailure('/usr/bin/docker', ['exec', '-i', name, ...shell], {
    input: `${commandLine}\n`,
    timeoutMs: 5 * 60_000,
    env: { ...process.env, DOCKER_BUILDKIT: '1' },
  });
}

/** `sh -c SCRIPT` in the host (test-side checks, never the operator's commands). */
export async function inHost(name: string, script: string): Promise<RunResult> {
  return dockerAllowingFailure(['exec', name, 'sh', '-c', script]);
}

/**
 * Everything of Postern a machine could keep: the files install.sh writes, the unit (file or enablement), the
 * interface, a wireguard-go or postern process, and any file named after Postern. Empty on a machine without it.
 */
export async function posternLeftovers(name: string): Promise<string[]> {
  const { stdout } = await inHost(
    name,
    [
      'for f in /usr/local/bin/postern /etc/postern /etc/systemd/system/postern-node.service /var/run/wireguard/postern0.sock; do [ -e "$f" ] && echo "file $f"; done',
      'systemctl is-enabled postern-node.service >/dev/null 2>&1 && echo "unit postern-node.service enabled"',
      'systemctl list-units --all --no-legend "postern*" 2>/dev/null | grep -q . && echo "unit listed: $(systemctl list-units --all --no-legend "postern*")"',
      'ip link show postern0 >/dev/null 2>&1 && echo "interface postern0"',
      'ps -eo comm= | grep -E "^(postern|wireguard-go)$" | sed "s/^/process /"',
      'find / -xdev \\( -path /proc -o -path /sys -o -path /var/cache/apt -o -path /var/lib/apt/lists \\) -prune -o -iname "*postern*" -print | sed "s/^/named /"',
      'true',
    ].join('\n'),
  );
  return stdout.split('\n').filter(Boolean);
}
