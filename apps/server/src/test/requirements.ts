import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// What a suite needs from the machine (root, nginx, a built server, Docker, ...), for `describe.skipIf(!canRun(...))`:
// elsewhere a suite whose needs are missing is skipped. The test command sets POSTERN_TEST_REQUIRE=all (as root, where
// it installed and started everything), and then a missing need fails the suite instead, so a green run says every
// suite ran; POSTERN_TEST_REQUIRE may also name needs, comma-separated (`nginx,postgres`). scripts/summarize-tests.mjs
// fails any other skip under POSTERN_TEST_REQUIRE=all, and lists the tests skipped on purpose. Used by the server's
// tests, e2e/ and bench/.

type Need =
  | 'root'
  | 'netns'
  | 'nginx'
  | 'iptables'
  | 'postgres'
  | 'postgres-binaries'
  | 'server-build'
  | 'cli-build'
  | 'docker'
  | 'compose-v1';

const repoFile = (path: string): string => fileURLToPath(new URL(`../../../../${path}`, import.meta.url));

/** The server's entry point the system tests start (`pnpm --filter @postern/server build`). */
export const SERVER_ENTRY = repoFile('apps/server/dist/main.js');
/** The node CLI the system tests run (`pnpm --filter @postern/cli build`). */
export const CLI_ENTRY = repoFile('apps/cli/dist/postern.mjs');
/** Debian's docker-compose (compose v1), what the compose examples are checked with. */
export const COMPOSE_V1 = '/usr/bin/docker-compose';

const isRoot = (): boolean => process.getuid?.() === 0;

function runs(file: string, args: readonly string[]): boolean {
  try {
    execFileSync(file, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** Each need but PostgreSQL's server (it answers asynchronously: `postgresAvailable()` in src/test/postgres.ts). */
const probes: Record<Exclude<Need, 'postgres'>, { isMet: () => boolean; hint: string }> = {
  root: { isMet: isRoot, hint: 'run as root' },
  netns: {
    isMet: () =>
      isRoot() && existsSync('/dev/net/tun') && existsSync('/usr/bin/wireguard-go') && runs('wg', ['--version']),
    hint: 'run as root with /dev/net/tun, wireguard-go and wg (scripts/install-deps.sh --all)',
  },
  // Real nginx binds as root and drops its workers to www-data.
  nginx: { isMet: () => isRoot() && runs('nginx', ['-v']), hint: 'run as root with nginx installed' },
  iptables: { isMet: () => isRoot() && runs('iptables', ['--version']), hint: 'run as root with iptables installed' },
  'postgres-binaries': {
    isMet: () => existsSync('/usr/lib/postgresql'),
    hint: 'install PostgreSQL (scripts/install-deps.sh --all)',
  },
  'server-build': {
    isMet: () => existsSync(SERVER_ENTRY),
    hint: 'build the server: pnpm --filter @postern/server build',
  },
  'cli-build': { isMet: () => existsSync(CLI_ENTRY), hint: 'build the CLI: pnpm --filter @postern/cli build' },
  docker: {
    isMet: () => isRoot() && runs('/usr/bin/docker', ['info']),
    hint: 'run as root with a Docker daemon (scripts/test.sh starts one)',
  },
  'compose-v1': { isMet: () => existsSync(COMPOSE_V1), hint: 'install docker-compose (scripts/install-deps.sh --all)' },
};

/** Whether POSTERN_TEST_REQUIRE makes a missing `need` a failure. */
export function isRequired(need: Need): boolean {
  // eslint-disable-next-line no-restricted-properties -- a test setting, read by the tests only
  const names = (process.env.POSTERN_TEST_REQUIRE ?? '').split(',').map((name) => name.trim());
  return names.includes('all') || names.includes(need);
}

const known = new Map<Need, boolean>();

/**
 * Whether every need is met here. A missing need that POSTERN_TEST_REQUIRE names throws instead, which fails the test
 * file when it is collected.
 */
export function canRun(...needs: Exclude<Need, 'postgres'>[]): boolean {
  let isEveryNeedMet = true;
  for (const need of needs) {
    const probe = probes[need];
    let isMet = known.get(need);
    if (isMet === undefined) {
      isMet = probe.isMet();
      known.set(need, isMet);
    }
    if (isMet) continue;
    if (isRequired(need))
      throw new Error(`this suite needs ${need}, which is missing (POSTERN_TEST_REQUIRE): ${probe.hint}`);
    isEveryNeedMet = false;
  }
  return isEveryNeedMet;
}
