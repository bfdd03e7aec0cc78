import { execFile } from 'node:child_process';

// The one way the harness runs a program to completion: execFile with an argv array (never a shell string).

export interface RunResult {
  /** Exit code; null when the program was killed by a signal (timeout included). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to the program's standard input, then closed. */
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** Runs a program and resolves with its exit code and output, whatever the code. */
export function runAllowingFailure(
  file: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
        env: options.env ?? process.env,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr: stderr || (error !== null && code === null ? error.message : '') });
      },
    );
    // A program may exit without reading its input; that is not an error of the run.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** Runs a program and resolves with its standard output; a non-zero exit rejects with the program's stderr. */
export async function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  const result = await runAllowingFailure(file, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${[file, ...args].join(' ')} exited with ${String(result.code)}: ${result.stderr.trim() || result.stdout.trim()}`,
    );
  }
  return result.stdout;
}

/**
 * argv that runs `file args` inside network namespace `ns`. `ip netns exec` execs the program, so a pid stays its own.
 */
export function inNetns(ns: string, file: string, args: readonly string[]): [string, string[]] {
  return ['ip', ['netns', 'exec', ns, file, ...args]];
}

export function runIn(ns: string, file: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  return run(...inNetns(ns, file, args), options);
}

export function runInAllowingFailure(
  ns: string,
  file: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  return runAllowingFailure(...inNetns(ns, file, args), options);
}
