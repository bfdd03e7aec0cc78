import { spawn, type ChildProcess } from 'node:child_process';
import { inNetns } from './exec.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// A long-running program inside a namespace (server, nginx, wireguard-go, backends, held client connections),
// with its recent output kept for assertions and for failure messages.

const OUTPUT_LIMIT = 256 * 1024;

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Keep standard input open so the test can write to it. */
  withStdin?: boolean;
}

export class ManagedProcess {
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal) once the program has ended. */
  readonly exited: Promise<number | null>;
  private output = '';
  private running = true;
  private readonly listeners = new Set<(chunk: string, stream: 'stdout' | 'stderr') => void>();

  constructor(
    readonly label: string,
    private readonly child: ChildProcess,
  ) {
    if (child.pid === undefined) throw new Error(`could not start ${label}`);
    this.pid = child.pid;
    const keep = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.output = (this.output + text).slice(-OUTPUT_LIMIT);
      for (const listener of this.listeners) listener(text, stream);
    };
    child.stdout?.on('data', keep('stdout'));
    child.stderr?.on('data', keep('stderr'));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        this.running = false;
        resolve(code);
      });
      child.once('error', (error) => {
        this.output += `\n[spawn error] ${error.message}`;
        this.running = false;
        resolve(null);
      });
    });
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Everything the program wrote to stdout and stderr (the last 256 KiB). */
  get text(): string {
    return this.output;
  }

  /** Hears all output from now on, beyond what `text` keeps (a burst's debug log outgrows it); returns its undo. */
  onOutput(listener: (chunk: string, stream: 'stdout' | 'stderr') => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  write(text: string): void {
    this.child.stdin?.write(text);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // Exited between the check and the kill.
    }
  }

  /** SIGTERM, then SIGKILL if the program has not ended within `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Resolves with the first match of `pattern` in the output; rejects early if the program exits first. */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return waitFor(
      () => {
        const match = pattern.exec(this.output);
        if (match) return match;
        if (!this.running) throw new Error(`${this.label} exited; output:\n${this.output.slice(-4000)}`);
        return undefined;
      },
      { timeoutMs, intervalMs: 50, what: `${this.label} to print ${String(pattern)}` },
    );
  }
}

/** Starts `file args` inside namespace `ns`; the returned pid is the program's own (ip netns exec execs it). */
export function spawnInNetns(
  ns: string,
  label: string,
  file: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ManagedProcess {
  const [ip, argv] = inNetns(ns, file, args);
  const child = spawn(ip, argv, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: [options.withStdin === true ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  return new ManagedProcess(label, child);
}
