import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TSIG_ALGORITHMS, isBackendHost, isDomainName } from '@postern/contract';
import type { DnsProviderConfig } from '../../../model/certificates.js';
import { CommandError, runCommand } from '../../exec.js';
import { assertRecordName, assertTxtValue, providerError, setting, type DnsSolver, type SolverDeps } from './solver.js';

// RFC 2136 dynamic updates signed with TSIG, through BIND's `nsupdate` (Debian's bind9-dnsutils): the reference
// client, which works with BIND, PowerDNS, Knot, Technitium and most self-hosted DNS. argv holds only the key file's
// path: the key itself goes into a 0600 file in a private 0700 directory, the update script through stdin, and every
// value in them was checked against an allow-list first (a line break in a name would be a new nsupdate command).

const KEY_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,253}$/;
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

export interface Rfc2136Deps extends SolverDeps {
  /** Runs nsupdate (argv, stdin); the default is the real one. */
  run?: (args: readonly string[], input: string) => Promise<void>;
  nsupdateBin?: string;
}

/** The update script nsupdate reads from stdin. Exported for the tests that prove nothing unchecked gets in. */
export function nsupdateScript(
  config: DnsProviderConfig,
  zone: string,
  action: 'add' | 'delete',
  recordName: string,
  value: string,
): string {
  const server = setting(config, 'server') ?? '';
  if (!isBackendHost(server)) throw providerError(config, `refusing server ${JSON.stringify(server)}`);
  const port = Number(setting(config, 'port') ?? 53);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw providerError(config, 'refusing the port');
  if (!isDomainName(zone)) throw providerError(config, `refusing zone ${JSON.stringify(zone)}`);
  const name = assertRecordName(recordName);
  const txt = assertTxtValue(value);
  const change = action === 'add' ? `update add ${name}. 60 IN TXT "${txt}"` : `update delete ${name}. IN TXT "${txt}"`;
  return `server ${server} ${String(port)}\nzone ${zone}.\n${change}\nsend\nquit\n`;
}

/** BIND's key statement (what `tsig-keygen` prints) for the key file. */
export function tsigKeyFile(config: DnsProviderConfig): string {
  const keyName = setting(config, 'keyName') ?? '';
  const algorithm = setting(config, 'algorithm') ?? 'hmac-sha256';
  if (!KEY_NAME_RE.test(keyName)) throw providerError(config, 'refusing the TSIG key name');
  if (!(TSIG_ALGORITHMS as readonly string[]).includes(algorithm))
    throw providerError(config, 'refusing the algorithm');
  if (!BASE64_RE.test(config.secret)) throw providerError(config, 'the TSIG key is not base64');
  return `key "${keyName}" {\n\talgorithm ${algorithm};\n\tsecret "${config.secret}";\n};\n`;
}

/** nsupdate's complaint, as the operator should read it. */
function explain(config: DnsProviderConfig, err: unknown): Error {
  const text = err instanceof CommandError ? err.stderr : err instanceof Error ? err.message : String(err);
  const server = setting(config, 'server') ?? '?';
  if (/BADSIG|BADKEY|tsig verify failure|TSIG .*error|NOTAUTH/i.test(text)) {
    return providerError(config, `${server} refused the update: the TSIG key is wrong or not allowed (${text})`);
  }
  if (/REFUSED/.test(text)) return providerError(config, `${server} refused the update (REFUSED): ${text}`);
  if (/timed out|could not reach|connection refused|communications error/i.test(text)) {
    return providerError(config, `${server} did not answer: ${text}`);
  }
  return providerError(config, `nsupdate failed: ${text}`);
}

export function createRfc2136Solver(config: DnsProviderConfig, deps: Rfc2136Deps): DnsSolver {
  const run =
    deps.run ??
    (async (args: readonly string[], input: string) => {
      await runCommand(deps.nsupdateBin ?? 'nsupdate', args, { input, timeoutMs: 30_000 });
    });

  async function update(action: 'add' | 'delete', recordName: string, value: string): Promise<void> {
    const zone = setting(config, 'zone') ?? (await deps.findZone(recordName));
    const script = nsupdateScript(config, zone, action, recordName, value);
    const keyFile = tsigKeyFile(config);
    const dir = await mkdtemp(join(tmpdir(), 'postern-tsig-'));
    try {
      const path = join(dir, 'key.conf');
      await writeFile(path, keyFile, { mode: 0o600 });
      await run(['-k', path], script);
    } catch (err) {
      throw explain(config, err);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  return {
    present: (recordName, value) => update('add', recordName, value),
    cleanup: (recordName, value) => update('delete', recordName, value),
  };
}
