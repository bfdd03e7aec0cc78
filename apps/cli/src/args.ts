import { parseArgs, type ParseArgsConfig } from 'node:util';
import { accessLimits, limits, ruleMessages, type ServiceType } from '@postern/contract';
import { UsageError } from './errors.js';
import type { HelpTopic } from './help.js';
import { parseDockerFilter } from './docker/labels.js';
import { parsePin } from './pin.js';
import { isInterfaceName } from './tunnel.js';

// Command-line parsing with node:util parseArgs: one option table per command, then typed values.

/** Where the API commands get the gateway and token from when flags are given. */
export interface ConnectionFlags {
  url?: string;
  token?: string;
  /** `--token-file FILE` (`-`: standard input): the token read from a file, so it is no process's argument. */
  tokenFile?: string;
  configDir?: string;
  /** `--pin`, already in the canonical `sha256:<base64>` form. */
  pin?: string;
  /** `--insecure`: plain HTTP to a public address is allowed. */
  insecure?: boolean;
}

/** Where and as whom the operator's commands sign in (`postern admin`). */
export interface OperatorFlags {
  url?: string;
  configDir?: string;
  pin?: string;
  insecure?: boolean;
  user: string;
  /** `--password-file FILE` (`-`: standard input); else POSTERN_ADMIN_PASSWORD. */
  passwordFile?: string;
  /** `--otp-file FILE` (`-`: standard input): the second-factor code; else POSTERN_ADMIN_OTP, else asked. */
  otpFile?: string;
}

export interface LocalFlags {
  configDir?: string;
  iface?: string;
}

/**
 * Who may open an HTTP service (docs/ACCESS.md), as flags. The policy is described whole: a list not given is empty,
 * share links off. The password is the exception: absent keeps the stored one (it is never shown back).
 */
export interface AuthFlags {
  mode: 'public' | 'protected' | 'inherit';
  /** Single sign-on with this provider; absent with an allow list: the domain policy's provider. */
  ssoProvider?: number;
  allowEmails: string[];
  allowEmailDomains: string[];
  allowGroups: string[];
  /** Read the password or PIN from this file (never from the command line, which `ps` shows). */
  passwordFile?: string;
  removePassword: boolean;
  shareLinks: boolean;
  bypassPaths: string[];
  bypassNetworks: string[];
  sessionSeconds?: number;
}

export type Command =
  | { kind: 'help'; topic: HelpTopic }
  | { kind: 'version' }
  | {
      kind: 'connect';
      connection: ConnectionFlags;
      iface?: string;
      daemon: boolean;
      /** `--docker[-socket PATH]`: also publish the local Docker engine's labelled containers (docs/LABELS.md). */
      docker?: { socket?: string; filter?: { key: string; value: string } };
    }
  | { kind: 'disconnect'; local: LocalFlags }
  | { kind: 'uninstall'; local: LocalFlags }
  | { kind: 'status'; local: LocalFlags; json: boolean; health: boolean }
  | {
      /** Configuration as code (docs/CONFIG-AS-CODE.md): the operator's calls, signed in as the console's admin. */
      kind: 'config';
      action: 'export' | 'plan' | 'apply';
      operator: OperatorFlags;
      file?: string;
      prune: boolean;
      dryRun: boolean;
      json: boolean;
    }
  | {
      kind: 'expose-http';
      connection: ConnectionFlags;
      name: string;
      port: number;
      domain: string;
      path?: string;
      proto?: 'http' | 'https';
      host?: string;
      allow: string[];
      block: string[];
      ttl?: number;
      /** Absent: no policy of its own (the domain's applies). */
      auth?: AuthFlags;
    }
  | {
      kind: 'expose-tcp';
      connection: ConnectionFlags;
      name: string;
      port: number;
      udp: boolean;
      publicPort?: number;
      tls: boolean;
      domain?: string;
      host?: string;
      allow: string[];
      block: string[];
      ttl?: number;
    }
  | { kind: 'services'; connection: ConnectionFlags; json: boolean }
  | { kind: 'access'; connection: ConnectionFlags; id: number; json: boolean; auth?: AuthFlags }
  | { kind: 'share-list'; connection: ConnectionFlags; id: number; json: boolean }
  | { kind: 'share-create'; connection: ConnectionFlags; id: number; name: string; path?: string; ttl?: number }
  | { kind: 'share-revoke'; connection: ConnectionFlags; id: number; linkId: number }
  | { kind: 'networks'; connection: ConnectionFlags; set: string[] | null }
  | {
      kind: 'service-action';
      action: 'enable' | 'disable' | 'rm';
      type: ServiceType;
      id: number;
      connection: ConnectionFlags;
    };

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | string[] | undefined>;

const helpOption: Options = { help: { type: 'boolean', short: 'h' } };
const connectionOptions: Options = {
  url: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'config-dir': { type: 'string' },
  pin: { type: 'string' },
  insecure: { type: 'boolean' },
};
const localOptions: Options = { 'config-dir': { type: 'string' }, interface: { type: 'string' } };
const exposeCommon: Options = {
  ...connectionOptions,
  port: { type: 'string' },
  host: { type: 'string' },
  allow: { type: 'string', multiple: true },
  block: { type: 'string', multiple: true },
  ttl: { type: 'string' },
};

const authOptions: Options = {
  auth: { type: 'string' },
  'sso-provider': { type: 'string' },
  'allow-email': { type: 'string', multiple: true },
  'allow-email-domain': { type: 'string', multiple: true },
  'allow-group': { type: 'string', multiple: true },
  'password-file': { type: 'string' },
  'no-password': { type: 'boolean' },
  'share-links': { type: 'boolean' },
  'bypass-path': { type: 'string', multiple: true },
  'bypass-network': { type: 'string', multiple: true },
  session: { type: 'string' },
};

export function parseCommand(argv: readonly string[]): Command {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    return { kind: 'help', topic: helpTopicOf(rest) };
  }
  if (name === '-V' || name === '--version' || name === 'version') return { kind: 'version' };

  switch (name) {
    case 'connect':
      return parseConnect(rest);
    case 'disconnect': {
      const { values } = parse('disconnect', rest, localOptions, 0);
      if (values.help) return { kind: 'help', topic: 'disconnect' };
      return { kind: 'disconnect', local: localOf(values) };
    }
    case 'uninstall': {
      const { values } = parse('uninstall', rest, localOptions, 0);
      if (values.help) return { kind: 'help', topic: 'uninstall' };
      return { kind: 'uninstall', local: localOf(values) };
    }
    case 'admin':
      return parseAdmin(rest);
    case 'status': {
      const { values } = parse(
        'status',
        rest,
        { ...localOptions, json: { type: 'boolean' }, health: { type: 'boolean' } },
        0,
      );
      if (values.help) return { kind: 'help', topic: 'status' };
      return { kind: 'status', local: localOf(values), json: values.json === true, health: values.health === true };
    }
    case 'services': {
      const { values } = parse('services', rest, { ...connectionOptions, json: { type: 'boolean' } }, 0);
      if (values.help) return { kind: 'help', topic: 'services' };
      return { kind: 'services', connection: connectionOf(values), json: values.json === true };
    }
    case 'networks': {
      const { values, positionals } = parse('networks', rest, connectionOptions, 1 + limits.gatewayNetworksMax);
      if (values.help) return { kind: 'help', topic: 'networks' };
      const [verb, ...networks] = positionals;
      if (verb === undefined) return { kind: 'networks', connection: connectionOf(values), set: null };
      if (verb !== 'set') throw usage('networks', `expected "set" or nothing, got "${verb}"`);
      if (networks.length === 0)
        throw usage('networks', 'expected at least one network after "set", e.g. 192.168.1.0/24');
      return { kind: 'networks', connection: connectionOf(values), set: networks };
    }
    case 'expose':
      return parseExpose(rest);
    case 'access': {
      const { values, positionals } = parse(
        'access',
        rest,
        { ...connectionOptions, ...authOptions, json: { type: 'boolean' } },
        1,
      );
      if (values.help) return { kind: 'help', topic: 'access' };
      const auth = authOf('access', values);
      return {
        kind: 'access',
        connection: connectionOf(values),
        id: serviceIdOf('access', positionals[0]),
        json: values.json === true,
        ...optional('auth', auth),
      };
    }
    case 'share':
      return parseShare(rest);
    case 'enable':
    case 'disable':
    case 'rm':
      return parseServiceAction(name, rest);
    default:
      throw new UsageError(`Unknown command "${name}". Run "postern --help" for the list of commands.`);
  }
}

function parseConnect(argv: readonly string[]): Command {
  const { values } = parse(
    'connect',
    argv,
    {
      ...connectionOptions,
      interface: { type: 'string' },
      daemon: { type: 'boolean' },
      docker: { type: 'boolean' },
      'docker-socket': { type: 'string' },
      'docker-filter': { type: 'string' },
    },
    0,
  );
  if (values.help) return { kind: 'help', topic: 'connect' };
  const socket = stringOf(values['docker-socket']);
  const filterText = stringOf(values['docker-filter']);
  const filter = filterText === undefined ? undefined : parseDockerFilter(filterText);
  const wantsDocker = values.docker === true || socket !== undefined || filter !== undefined;
  if (wantsDocker && values.daemon !== true) throw new UsageError('--docker needs --daemon (it keeps watching)');
  return {
    kind: 'connect',
    connection: connectionOf(values),
    ...ifaceOf(values),
    daemon: values.daemon === true,
    ...(wantsDocker
      ? { docker: { ...(socket === undefined ? {} : { socket }), ...(filter === undefined ? {} : { filter }) } }
      : {}),
  };
}

function parseAdmin(argv: readonly string[]): Command {
  const { values, positionals } = parse(
    'admin',
    argv,
    {
      url: { type: 'string' },
      'config-dir': { type: 'string' },
      pin: { type: 'string' },
      insecure: { type: 'boolean' },
      user: { type: 'string' },
      'password-file': { type: 'string' },
      'otp-file': { type: 'string' },
      file: { type: 'string', short: 'f' },
      prune: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
  );
  if (values.help) return { kind: 'help', topic: 'admin' };
  const action = positionals[0];
  if (action !== 'export' && action !== 'plan' && action !== 'apply') {
    throw new UsageError('Usage: postern admin export|plan|apply [-f FILE] (see postern admin --help)');
  }
  const file = stringOf(values.file);
  if (action !== 'export' && file === undefined) throw new UsageError(`postern admin ${action} needs -f FILE`);
  const pin = stringOf(values.pin);
  return {
    kind: 'config',
    action,
    operator: {
      user: stringOf(values.user) ?? 'admin',
      ...optional('url', stringOf(values.url)),
      ...optional('configDir', stringOf(values['config-dir'])),
      ...optional('pin', pin === undefined ? undefined : parsePin(pin)),
      ...(values.insecure === true ? { insecure: true } : {}),
      ...optional('passwordFile', stringOf(values['password-file'])),
      ...optional('otpFile', stringOf(values['otp-file'])),
    },
    ...optional('file', file),
    prune: values.prune === true,
    dryRun: values['dry-run'] === true,
    json: values.json === true,
  };
}

function parseExpose(argv: readonly string[]): Command {
  const [type, ...rest] = argv;
  if (type === undefined || type === '-h' || type === '--help') return { kind: 'help', topic: 'expose' };
  if (type === 'http') {
    const options: Options = {
      ...exposeCommon,
      ...authOptions,
      domain: { type: 'string' },
      path: { type: 'string' },
      proto: { type: 'string' },
    };
    const { values, positionals } = parse('expose http', rest, options, 1);
    if (values.help) return { kind: 'help', topic: 'expose http' };
    const proto = stringOf(values.proto);
    if (proto !== undefined && !isBackendProto(proto)) throw usage('expose http', '--proto must be http or https');
    const name = nameOf('expose http', positionals);
    const port = portOf('expose http', values.port, '--port');
    const domain = stringOf(values.domain);
    // The gateway refuses a node's web service without a domain; say so before asking, in the gateway's words.
    if (domain === undefined) throw usage('expose http', ruleMessages.domainRequiredForNode);
    return {
      kind: 'expose-http',
      connection: connectionOf(values),
      name,
      port,
      domain,
      ...optional('path', stringOf(values.path)),
      ...optional('proto', proto),
      ...optional('host', stringOf(values.host)),
      allow: listOf(values.allow),
      block: listOf(values.block),
      ...optional('ttl', ttlOf('expose http', values.ttl)),
      ...optional('auth', authOf('expose http', values)),
    };
  }
  if (type === 'tcp') {
    const options: Options = {
      ...exposeCommon,
      udp: { type: 'boolean' },
      'public-port': { type: 'string' },
      tls: { type: 'boolean' },
      domain: { type: 'string' },
    };
    const { values, positionals } = parse('expose tcp', rest, options, 1);
    if (values.help) return { kind: 'help', topic: 'expose tcp' };
    if (values.udp === true && values.tls === true)
      throw usage('expose tcp', '--tls works with TCP only, not with --udp');
    const publicPort =
      values['public-port'] === undefined ? undefined : portOf('expose tcp', values['public-port'], '--public-port');
    return {
      kind: 'expose-tcp',
      connection: connectionOf(values),
      name: nameOf('expose tcp', positionals),
      port: portOf('expose tcp', values.port, '--port'),
      udp: values.udp === true,
      ...optional('publicPort', publicPort),
      tls: values.tls === true,
      ...optional('domain', stringOf(values.domain)),
      ...optional('host', stringOf(values.host)),
      allow: listOf(values.allow),
      block: listOf(values.block),
      ...optional('ttl', ttlOf('expose tcp', values.ttl)),
    };
  }
  throw usage('expose', `expected "http" or "tcp" after "expose", got "${type}"`);
}

function parseShare(argv: readonly string[]): Command {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === '-h' || verb === '--help') return { kind: 'help', topic: 'share' };
  if (verb === 'list') {
    const { values, positionals } = parse('share', rest, { ...connectionOptions, json: { type: 'boolean' } }, 1);
    if (values.help) return { kind: 'help', topic: 'share' };
    return {
      kind: 'share-list',
      connection: connectionOf(values),
      id: serviceIdOf('share', positionals[0]),
      json: values.json === true,
    };
  }
  if (verb === 'create') {
    const options: Options = { ...connectionOptions, path: { type: 'string' }, ttl: { type: 'string' } };
    const { values, positionals } = parse('share', rest, options, 2);
    if (values.help) return { kind: 'help', topic: 'share' };
    const name = positionals[1];
    if (name === undefined || name.trim() === '') throw usage('share', 'missing the link NAME after the service ID');
    return {
      kind: 'share-create',
      connection: connectionOf(values),
      id: serviceIdOf('share', positionals[0]),
      name,
      ...optional('path', stringOf(values.path)),
      ...optional('ttl', ttlOf('share', values.ttl)),
    };
  }
  if (verb === 'revoke') {
    const { values, positionals } = parse('share', rest, connectionOptions, 2);
    if (values.help) return { kind: 'help', topic: 'share' };
    const linkId = positionals[1];
    if (linkId === undefined || !/^[1-9]\d{0,15}$/.test(linkId))
      throw usage('share', 'expected the numeric ID of the link after the service ID (see "postern share list ID")');
    return {
      kind: 'share-revoke',
      connection: connectionOf(values),
      id: serviceIdOf('share', positionals[0]),
      linkId: Number(linkId),
    };
  }
  throw usage('share', `expected "list", "create" or "revoke" after "share", got "${verb}"`);
}

function serviceIdOf(topic: HelpTopic, id: string | undefined): number {
  if (id === undefined || !/^[1-9]\d{0,15}$/.test(id))
    throw usage(topic, 'expected the numeric ID of an HTTP service (see "postern services")');
  return Number(id);
}

const AUTH_MODES = ['public', 'protected', 'inherit'] as const;

/** The access options by name: `--auth`, `--sso-provider`… on the command line, `postern.http.access…` as labels. */
export type AccessOptionValues = Record<string, string | boolean | string[] | undefined>;

/**
 * The access options (`postern access`, `expose http --auth`, and a container's `postern.*.access` labels: one
 * vocabulary, one parser); undefined when none is given. Any way in or exception implies `protected`; combined with
 * `public` or `inherit` it is a contradiction, refused before asking the gateway. `optionName` names an option in a
 * message (`auth` is the mode), `fail` throws.
 */
export function parseAccessOptions(
  values: AccessOptionValues,
  optionName: (option: string) => string,
  fail: (message: string) => never,
): AuthFlags | undefined {
  const mode = stringOf(values.auth);
  if (mode !== undefined && !(AUTH_MODES as readonly string[]).includes(mode))
    fail(`${optionName('auth')} must be public, protected or inherit`);
  const provider = stringOf(values['sso-provider']);
  if (provider !== undefined && !/^[1-9]\d{0,15}$/.test(provider))
    fail(`${optionName('sso-provider')} must be the numeric ID of an identity provider (the operator knows it)`);
  const session = values.session === undefined ? undefined : sessionOf(values.session, optionName, fail);
  const flags = {
    allowEmails: listOf(values['allow-email']),
    allowEmailDomains: listOf(values['allow-email-domain']),
    allowGroups: listOf(values['allow-group']),
    shareLinks: values['share-links'] === true,
    removePassword: values['no-password'] === true,
    bypassPaths: listOf(values['bypass-path']),
    bypassNetworks: listOf(values['bypass-network']),
  };
  const passwordFile = stringOf(values['password-file']);
  if (passwordFile !== undefined && flags.removePassword)
    fail(`${optionName('password-file')} and ${optionName('no-password')} contradict each other`);
  const isProtectedOnly =
    provider !== undefined ||
    passwordFile !== undefined ||
    session !== undefined ||
    flags.allowEmails.length + flags.allowEmailDomains.length + flags.allowGroups.length > 0 ||
    flags.shareLinks ||
    flags.removePassword ||
    flags.bypassPaths.length + flags.bypassNetworks.length > 0;
  if (mode === undefined && !isProtectedOnly) return undefined;
  if (mode !== undefined && mode !== 'protected' && isProtectedOnly)
    fail(`${optionName('auth')} ${mode} takes no other access option (they describe a protected policy)`);
  return {
    mode: (mode ?? 'protected') as AuthFlags['mode'],
    ...flags,
    ...optional('ssoProvider', provider === undefined ? undefined : Number(provider)),
    ...optional('passwordFile', passwordFile),
    ...optional('sessionSeconds', session),
  };
}

function authOf(topic: HelpTopic, values: Values): AuthFlags | undefined {
  return parseAccessOptions(
    values,
    (option) => `--${option}`,
    (message) => {
      throw usage(topic, message);
    },
  );
}

/** `--session 30m|12h|7d` (or plain seconds): how long a visitor stays signed in; 5 minutes to 30 days. */
function sessionOf(
  value: Values[string],
  optionName: (option: string) => string,
  fail: (message: string) => never,
): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(stringOf(value)?.trim() ?? '');
  const seconds = match ? Number(match[1]) * (TTL_UNITS[match[2] || 's'] ?? 1) : NaN;
  if (!(seconds >= accessLimits.sessionSecondsMin && seconds <= accessLimits.sessionSecondsMax))
    fail(`${optionName('session')} must be a duration such as 30m, 12h or 7d (at least 5m, at most 30d)`);
  return seconds;
}

function parseServiceAction(action: 'enable' | 'disable' | 'rm', argv: readonly string[]): Command {
  const { values, positionals } = parse(action, argv, connectionOptions, 2);
  if (values.help) return { kind: 'help', topic: action };
  const [type, id] = positionals;
  if (type !== 'http' && type !== 'tcp')
    throw usage(action, `expected "http" or "tcp", got ${type === undefined ? 'nothing' : `"${type}"`}`);
  if (id === undefined || !/^[1-9]\d{0,15}$/.test(id))
    throw usage(action, 'expected the numeric ID of the service (see "postern services")');
  return { kind: 'service-action', action, type, id: Number(id), connection: connectionOf(values) };
}

function parse(
  topic: HelpTopic,
  argv: readonly string[],
  options: Options,
  maxPositionals: number,
): { values: Values; positionals: string[] } {
  let result: { values: Values; positionals: string[] };
  try {
    result = parseArgs({
      args: [...argv],
      options: { ...options, ...helpOption },
      allowPositionals: true,
      strict: true,
    }) as {
      values: Values;
      positionals: string[];
    };
  } catch (error) {
    // parseArgs' messages are precise ("Unknown option '--x'", "Option '--port <value>' argument missing").
    throw usage(topic, error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error));
  }
  if (result.values.help !== true && result.positionals.length > maxPositionals) {
    throw usage(topic, `unexpected argument "${result.positionals[maxPositionals] ?? ''}"`);
  }
  return result;
}

function usage(topic: HelpTopic, message: string): UsageError {
  return new UsageError(`${message}. Run "postern ${topic} --help".`);
}

function helpTopicOf(argv: readonly string[]): HelpTopic {
  const joined = argv
    .filter((arg) => !arg.startsWith('-'))
    .slice(0, 2)
    .join(' ');
  const topics: HelpTopic[] = [
    'expose http',
    'expose tcp',
    'connect',
    'disconnect',
    'uninstall',
    'status',
    'expose',
    'services',
    'networks',
    'access',
    'share',
    'enable',
    'disable',
    'rm',
  ];
  return topics.find((topic) => joined === topic || joined.startsWith(`${topic} `)) ?? 'main';
}

function connectionOf(values: Values): ConnectionFlags {
  const pin = stringOf(values.pin);
  const token = stringOf(values.token);
  const tokenFile = stringOf(values['token-file']);
  if (token !== undefined && tokenFile !== undefined)
    throw new UsageError('Give the token once: --token or --token-file, not both');
  return {
    ...optional('url', stringOf(values.url)),
    ...optional('token', token),
    ...optional('tokenFile', tokenFile),
    ...optional('configDir', stringOf(values['config-dir'])),
    ...optional('pin', pin === undefined ? undefined : parsePin(pin)),
    ...(values.insecure === true ? { insecure: true } : {}),
  };
}

function localOf(values: Values): LocalFlags {
  return { ...optional('configDir', stringOf(values['config-dir'])), ...ifaceOf(values) };
}

function ifaceOf(values: Values): { iface?: string } {
  const iface = stringOf(values.interface);
  if (iface === undefined) return {};
  if (!isInterfaceName(iface))
    throw new UsageError(`Invalid interface name "${iface}": use at most 15 letters, digits or _=+.-`);
  return { iface };
}

function nameOf(topic: HelpTopic, positionals: string[]): string {
  const name = positionals[0];
  if (name === undefined || name.trim() === '') throw usage(topic, 'missing the service NAME');
  return name;
}

function portOf(topic: HelpTopic, value: Values[string], flag: string): number {
  if (value === undefined) throw usage(topic, `missing ${flag} P`);
  const text = stringOf(value) ?? '';
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw usage(topic, `${flag} must be a port number from 1 to 65535`);
  return Number(text);
}

const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--ttl 90s|30m|1h|7d` (or plain seconds): how long the service stays published; the gateway then disables it. */
function ttlOf(topic: HelpTopic, value: Values[string]): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,9})([smhd]?)$/.exec(stringOf(value)?.trim() ?? '');
  const seconds = match ? Number(match[1]) * (TTL_UNITS[match[2] || 's'] ?? 1) : NaN;
  if (!(seconds >= limits.serviceTtlMinSeconds && seconds <= limits.serviceTtlMaxSeconds)) {
    throw usage(topic, '--ttl must be a duration such as 30m, 1h or 7d (at least 1 minute, at most 366 days)');
  }
  return seconds;
}

/** `--allow a --allow b` and `--allow a,b` both work. */
function listOf(value: Values[string]): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return items
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function isBackendProto(value: string): value is 'http' | 'https' {
  return value === 'http' || value === 'https';
}

function stringOf(value: Values[string]): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Spreads `{ key: value }` only when the value is set, so absent flags stay absent (not `undefined`). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
