import { readEnv } from './env.js';
import { runCli } from './run.js';
import { createSystem } from './system.js';
import { askSecretOn } from './terminal.js';

// Entry point of the bundled `postern` binary.
const env = readEnv();
const argv = process.argv.slice(2);
const stop = new AbortController();
// Only `connect --daemon` runs until stopped; it takes the tunnel down on SIGTERM/SIGINT. Every other command keeps
// the default: Ctrl-C ends it at once.
if (argv[0] === 'connect' && argv.includes('--daemon')) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => (stop.signal.aborted ? process.exit(130) : stop.abort()));
  }
}

// No top-level await: the same entry is bundled as CommonJS for the single executable (build.mjs), which has none.
void runCli(argv, {
  system: createSystem(env.path),
  env,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: stop.signal,
  ...(process.stdin.isTTY ? { askSecret: askSecretOn(process.stdin, process.stderr) } : {}),
}).then((code) => {
  process.exitCode = code;
});
