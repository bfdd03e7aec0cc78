import { spawn } from 'node:child_process';

// The one way the data plane runs a program: argv array, no shell, optional stdin (so secrets never reach argv),
// output collected, a non-zero exit turned into an Error carrying stderr.

export class CommandError extends Error {
  override name = 'CommandError';
  constructor(
    readonly command: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`${command} failed (exit ${code ?? 'signal'}): ${stderr.trim() || 'no output'}`);
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

export function runCommand(
  file: string,
  args: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 30_000 });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const result = { stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') };
      if (code === 0) resolve(result);
      else reject(new CommandError(`${file} ${args[0] ?? ''}`.trim(), code, result.stderr));
    });
    child.stdin.on('error', () => undefined); // a program that exits without reading stdin must not crash us
    child.stdin.end(options.input ?? '');
  });
}
