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
  /** Per peer (public key), overriding `handshake`: one gateway dead while others answer. */
  peerHandshake?: (publicKey: string) => number | undefined;
  /** Answers of programs the fake does not model (systemctl), by `program arg…`; unlisted calls fail. */
  answers?: Record<string, RunResult>;
}

/** A peer as the fake's WireGuard holds it, set by `wg setconf` and `wg set`. */
export interface FakePeer {
  publicKey: string;
  endpoint: string | null;
  allowedIps: string[];
}

export interface FakeSystem extends System {
  /** Every program call as `basename arg…`. */
  calls: string[];
  /** Content of the file given to every `wg setconf`. */
  setconfInputs: string[];
  links: Set<string>;
  /** Peers per interface; an interface without an entry dumps one legacy peer (PEERKEY=, 10.8.0.0/24). */
  peers: Map<string, FakePeer[]>;
  files: Map<string, { text: string; mode: number }>;
  clock: { now: number };
  /** What singleExecutable() answers; tests of `uninstall` set it. */
  executable: { path: string | null };
}

export function createFakeSystem(options: FakeSystemOptions = {}): FakeSystem {
  const tools = new Set(options.tools ?? ['ip', 'wg', 'wireguard-go']);
  const links = new Set<string>();
  const files = new Map<string, { text: string; mode: number }>();
  const calls: string[] = [];
  const peers = new Map<string, FakePeer[]>();
  const setconfInputs: string[] = [];
  const clock = { now: Date.UTC(2026, 0, 1) };
  const executable: { path: string | null } = { path: null };
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
    if (object === 'link' && verb === 'delete') {
      peers.delete(name ?? '');
      return links.delete(name ?? '') ? ok() : fail('Cannot find device');
    }
    return ok();
  }

  function runWg(args: readonly string[]): RunResult {
    const [verb, name = '', what] = args;
    if (verb === 'show' && what === 'dump') {
      if (!links.has(name)) return fail('Unable to access interface: No such device');
      return ok(wgDump(peers.get(name), options));
    }
    if (verb === 'setconf') {
      if (!links.has(name)) return fail('Unable to modify interface: No such device');
      peers.set(name, parseSetconf(files.get(what ?? '')?.text ?? ''));
      return ok();
    }
    if (verb === 'set' && args[2] === 'peer') {
      if (!links.has(name)) return fail('Unable to modify interface: No such device');
      peers.set(name, setPeer(peers.get(name) ?? [], args));
    }
    return ok();
  }

  return {
    calls,
    peers,
    setconfInputs,
    links,
    files,
    clock,
    executable,
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
      const answer = options.answers?.[[program, ...args].join(' ')];
      return answer ?? fail(`${program}: not faked`);
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
    async removeTree(dir) {
      for (const file of [...files.keys()]) if (file === dir || file.startsWith(`${dir}/`)) files.delete(file);
    },
    singleExecutable() {
      return executable.path;
    },
    async sleep(ms, signal) {
      if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
      clock.now += ms;
    },
    now: () => clock.now,
  };
}

/** `wg show NAME dump`: an interface without tracked peers dumps one legacy peer. */
function wgDump(tracked: FakePeer[] | undefined, options: FakeSystemOptions): string {
  const lines = (tracked ?? [{ publicKey: 'PEERKEY=', endpoint: '192.0.2.1:51820', allowedIps: ['10.8.0.0/24'] }]).map(
    (peer) =>
      [
        peer.publicKey,
        '(none)',
        peer.endpoint ?? '(none)',
        peer.allowedIps.length === 0 ? '(none)' : peer.allowedIps.join(','),
        String(options.peerHandshake?.(peer.publicKey) ?? options.handshake?.() ?? 0),
        '1536',
        '2048',
        '25',
      ].join('\t'),
  );
  return `PRIVATE=\tPUBLIC=\t0\toff\n${lines.map((line) => `${line}\n`).join('')}`;
}

/** `wg set NAME peer KEY (remove | endpoint E | allowed-ips A…)`: the interface's peers after it. */
function setPeer(list: FakePeer[], args: readonly string[]): FakePeer[] {
  const key = args[3] ?? '';
  if (args[4] === 'remove') return list.filter((peer) => peer.publicKey !== key);
  let peer = list.find((item) => item.publicKey === key);
  if (!peer) {
    peer = { publicKey: key, endpoint: null, allowedIps: [] };
    list.push(peer);
  }
  for (let i = 4; i < args.length; i += 2) {
    const value = args[i + 1] ?? '';
    if (args[i] === 'endpoint') peer.endpoint = value;
    if (args[i] === 'allowed-ips') assignAllowedIps(list, peer, value === '' ? [] : value.split(','));
  }
  return list;
}

function parseSetconf(text: string): FakePeer[] {
  const list: FakePeer[] = [];
  for (const line of text.split('\n')) {
    if (line === '[Peer]') list.push({ publicKey: '', endpoint: null, allowedIps: [] });
    const peer = list.at(-1);
    const [key, value = ''] = line.split(' = ');
    if (!peer) continue;
    if (key === 'PublicKey') peer.publicKey = value;
    if (key === 'Endpoint') peer.endpoint = value;
    if (key === 'AllowedIPs') assignAllowedIps(list, peer, value.split(', '));
  }
  return list;
}

/** WireGuard's rule: a prefix belongs to one peer, so giving it to one takes it from any other. */
function assignAllowedIps(list: FakePeer[], peer: FakePeer, allowedIps: string[]): void {
  for (const other of list) {
    if (other !== peer) other.allowedIps = other.allowedIps.filter((cidr) => !allowedIps.includes(cidr));
  }
  peer.allowedIps = [...allowedIps];
}
