import type { RunResult, System } from './system.js';

// Test double of `System` (used by *.test.ts only): answers like `ip`, `wg` and `wireguard-go` would, keeps
// interfaces and files in memory, and runs a fake clock so daemon timing is tested without waiting.

export interface FakeSystemOptions {
  /** Programs found on PATH. */
  tools?: string[];
  /** Whether `ip link add … type wireguard` works (kernel module present). */
  hasKernelWireguard?: boolean;
  /** Unix seconds reported as the peer's latest handshake; 0 = none yet. */
  handshake?: () => number;
}

export interface FakeSystem extends System {
  /** Every program call as `basename arg…`. */
  calls: string[];
  /** Content of the file given to every `wg setconf`. */
  setconfInputs: string[];
  links: Set<string>;
  files: Map<string, { text: string; mode: number }>;
  clock: { now: number };
}

export function createFakeSystem(options: FakeSystemOptions = {}): FakeSystem {
  const tools = new Set(options.tools ?? ['ip', 'wg', 'wireguard-go']);
  const links = new Set<string>();
  const files = new Map<string, { text: string; mode: number }>();
  const calls: string[] = [];
  const setconfInputs: string[] = [];
  const clock = { now: Date.UTC(2026, 0, 1) };
  const ok = (stdout = ''): RunResult => ({ code: 0, stdout, stderr: '' });
  const fail = (stderr: string): RunResult => ({ code: 1, stdout: '', stderr });

  function runIp(args: readonly string[]): RunResult {
    const [object, verb, , name] = args[0] === '-4' || args[0] === '-6' ? args.slice(1) : args;
    if (object === 'link' && verb === 'show')
      return name !== undefined && links.has(name)
        ? ok(`1: ${name}: <POINTOPOINT>`)
        : fail(`Device "${String(name)}" does not exist.`);
    if (object === 'link' && verb === 'add') {
      if (!options.hasKernelWireguard) return { code: 2, stdout: '', stderr: 'Error: Unknown device type.' };
      links.add(name ?? '');
      return ok();
    }
    if (object === 'link' && verb === 'delete') return links.delete(name ?? '') ? ok() : fail('Cannot find device');
    return ok();
  }

  function runWg(args: readonly string[]): RunResult {
    const [verb, name, what] = args;
    if (verb === 'show' && what === 'dump') {
      if (name === undefined || !links.has(name)) return fail('Unable to access interface: No such device');
      const peer = [
        'PEERKEY=',
        '(none)',
        '192.0.2.1:51820',
        '10.8.0.0/24',
        String(options.handshake?.() ?? 0),
        '1536',
        '2048',
        '25',
      ];
      return ok(`PRIVATE=\tPUBLIC=\t0\toff\n${peer.join('\t')}\n`);
    }
    return ok();
  }

  return {
    calls,
    setconfInputs,
    links,
    files,
    clock,
    async run(command, args) {
      const program = command.split('/').pop() ?? command;
      calls.push([program, ...args].join(' '));
      if (program === 'ip') return runIp(args);
      if (program === 'wg') {
        if (args[0] === 'setconf') setconfInputs.push(files.get(args[2] ?? '')?.text ?? '');
        return runWg(args);
      }
      if (program === 'wireguard-go') {
        const name = args[0] ?? '';
        links.add(name);
        files.set(`/var/run/wireguard/${name}.sock`, { text: '', mode: 0o755 });
        return ok();
      }
      return fail(`${program}: not faked`);
    },
    async which(command) {
      return tools.has(command) ? `/usr/bin/${command}` : null;
    },
    async ensurePrivateDir(dir) {
      files.set(dir, { text: '', mode: 0o700 });
    },
    async writePrivateFile(file, text) {
      files.set(file, { text, mode: 0o600 });
    },
    async readText(file) {
      return files.get(file)?.text ?? null;
    },
    async exists(file) {
      return files.has(file);
    },
    async removeFile(file) {
      files.delete(file);
      // wireguard-go exits when its socket goes away, taking the interface with it.
      const socket = /^\/var\/run\/wireguard\/(.+)\.sock$/.exec(file);
      if (socket?.[1]) links.delete(socket[1]);
    },
    async sleep(ms, signal) {
      if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
      clock.now += ms;
    },
    now: () => clock.now,
  };
}
