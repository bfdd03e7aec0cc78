import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The start command (`pnpm start`, the image's entrypoint, the systemd unit): runs the control plane and keeps it
// running. nginx and WireGuard outlive the control plane on purpose (a restart adopts them, so it cuts nothing);
// this process is what stops them all when the gateway itself is stopped.
//   SIGTERM, SIGINT  stop the gateway: the control plane gets SIGINT, which stops nginx and WireGuard too.
//   SIGHUP           restart the control plane only (after an upgrade, say): it gets SIGTERM, keeps the data plane
//                    serving, and a new one adopts it.
// A control plane that dies is started again (1 s, doubling to 30 s while it keeps dying within 30 s of its start).

const CONTROL_PLANE = join(dirname(fileURLToPath(import.meta.url)), 'main.js');
const STOP_DEADLINE_MS = 15_000;
const STABLE_AFTER_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;

let child: ChildProcess | null = null;
let isStopping = false;
let failures = 0;
let restartTimer: NodeJS.Timeout | null = null;

function say(message: string): void {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), component: 'supervisor', msg: message })}\n`,
  );
}

function start(): void {
  restartTimer = null;
  const startedAt = Date.now();
  // Its own process group: a Ctrl-C in the terminal reaches this process only, which then stops everything in order.
  const current = spawn(process.execPath, [...process.execArgv, CONTROL_PLANE], { stdio: 'inherit', detached: true });
  child = current;
  current.on('error', (err) => say(`cannot start the control plane: ${err.message}`));
  current.on('exit', (code, signal) => {
    if (child === current) child = null;
    if (isStopping) {
      process.exit(code ?? 0);
    }
    failures = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : failures + 1;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1));
    say(`the control plane exited (${signal ?? `code ${String(code)}`}); starting it again in ${delay} ms`);
    restartTimer = setTimeout(start, delay);
  });
}

function stop(signal: NodeJS.Signals): void {
  if (isStopping) return;
  isStopping = true;
  say(`${signal}: stopping the gateway`);
  if (restartTimer) clearTimeout(restartTimer);
  const current = child;
  if (!current) process.exit(0);
  current.kill('SIGINT');
  setTimeout(() => {
    say('the control plane did not stop in time; killing it');
    current.kill('SIGKILL');
  }, STOP_DEADLINE_MS).unref();
}

process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGHUP', () => {
  if (isStopping || !child) return;
  say('SIGHUP: restarting the control plane; nginx and WireGuard keep serving');
  failures = 0;
  // Its exit handler starts the new one at once (the delay of a first failure is 1 s; a planned restart needs none).
  const current = child;
  current.once('exit', () => {
    if (restartTimer) clearTimeout(restartTimer);
    if (!isStopping) start();
  });
  current.kill('SIGTERM');
});

start();
