import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, runIn } from './exec.js';
import { newLabId } from './ids.js';
import { linksWithPrefix, namespacesWithPrefix, registerExitCleanup, sweepNamespaces } from './cleanup.js';
import { spawnInNetns, type ManagedProcess, type SpawnOptions } from './processes.js';

// A lab is one test file's private set of network namespaces and the processes started in them. Everything
// it creates is named after its id, so destroy() (and the exit/signal handler, if the test process dies)
// removes exactly that and nothing else.

export interface VethEnd {
  /** Namespace of this end; undefined = the namespace the tests run in. */
  ns?: string;
  ifname: string;
  /** Address with prefix, e.g. "10.213.8.1/24"; omitted for an end that joins a bridge. */
  address?: string;
}

export class Lab {
  readonly id = newLabId();
  private readonly processes = new Set<ManagedProcess>();
  private readonly tempDirs: string[] = [];
  private readonly beforeRemoving: (() => void)[] = [];
  private readonly unregister = registerExitCleanup(() => this.removeEverything());

  /** A namespace name for `role`: unique to this lab. */
  nsName(role: string): string {
    return `${this.id}-${role}`;
  }

  /** An interface name for `role` (at most 7 characters): unique across the machine, as WireGuard sockets need. */
  ifName(role: string): string {
    if (!/^[a-z0-9]{1,7}$/.test(role)) throw new Error(`interface role must be 1-7 lower-case characters: ${role}`);
    return `${this.id}${role}`;
  }

  async createNamespace(role: string): Promise<string> {
    const ns = this.nsName(role);
    await run('ip', ['netns', 'add', ns]);
    await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    return ns;
  }

  /** A veth pair between two namespaces, both ends up, with their addresses (IPv4 only: no IPv6 link-local). */
  async createVeth(a: VethEnd, b: VethEnd): Promise<void> {
    await run('ip', [
      'link',
      'add',
      'name',
      a.ifname,
      ...(a.ns ? ['netns', a.ns] : []),
      'type',
      'veth',
      'peer',
      'name',
      b.ifname,
      ...(b.ns ? ['netns', b.ns] : []),
    ]);
    for (const end of [a, b]) {
      const scope = end.ns ? ['-n', end.ns] : [];
      if (end.address) await run('ip', [...scope, 'addr', 'add', end.address, 'dev', end.ifname]);
      // The lab's links are IPv4 only. Without this the kernel gives each end an IPv6 link-local address whose
      // duplicate-address detection ends about a second after the link comes up: an address event that makes a
      // Chromium in that namespace fail its requests in flight with net::ERR_NETWORK_CHANGED (seen failing the first
      // navigation of e2e/browser/origin.test.ts, whose browser shares the test process's namespace with the
      // management veth end).
      await run('ip', [...scope, 'link', 'set', end.ifname, 'addrgenmode', 'none']);
      await run('ip', [...scope, 'link', 'set', end.ifname, 'up']);
    }
  }

  async addRoute(ns: string, destination: string, via: string): Promise<void> {
    await run('ip', ['-n', ns, 'route', 'replace', destination, 'via', via]);
  }

  async enableForwarding(ns: string): Promise<void> {
    await runIn(ns, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  }

  /** A temporary directory removed with the lab. */
  makeTempDir(label: string): string {
    const dir = mkdtempSync(join(tmpdir(), `${this.id}-${label}-`));
    this.tempDirs.push(dir);
    return dir;
  }

  /** Runs `action` just before the lab removes its namespaces and temporary directories (also on exit). */
  beforeRemove(action: () => void): void {
    this.beforeRemoving.push(action);
  }

  spawn(ns: string, label: string, file: string, args: readonly string[], options?: SpawnOptions): ManagedProcess {
    const child = spawnInNetns(ns, label, file, args, options);
    this.processes.add(child);
    void child.exited.then(() => this.processes.delete(child));
    return child;
  }

  /** Stops this lab's processes gently, then removes every namespace (and what is left in them). */
  async destroy(): Promise<void> {
    await Promise.all([...this.processes].map((child) => child.stop(2000)));
    this.removeEverything();
    this.unregister();
  }

  /** Namespaces and interfaces of this lab that still exist: empty after destroy(). */
  leftovers(): string[] {
    return [...namespacesWithPrefix(this.id), ...linksWithPrefix(this.id)];
  }

  private removeEverything(): void {
    for (const action of this.beforeRemoving.splice(0)) {
      try {
        action();
      } catch {
        // Best effort: what the lab made is removed all the same.
      }
    }
    sweepNamespaces(this.id);
    for (const dir of this.tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
