import { createHash } from 'node:crypto';
import {
  AgentHttpServiceCreateSchema,
  AgentTcpServiceCreateSchema,
  CONTAINER_NAME_PATTERN,
  LABEL_SERVICE_KEY_PATTERN,
  toFieldErrors,
  type AgentHttpServiceCreate,
  type AgentTcpServiceCreate,
  type ServiceAccessUpdate,
  type ServiceSource,
} from '@postern/contract';
import type { z } from 'zod';
import { parseAccessOptions, type AccessOptionValues } from '../args.js';
import { checkAccessBody } from '../commands/access.js';
import { UsageError } from '../errors.js';

// Docker labels → the services a container asks for (docs/LABELS.md). Every label value is checked here against the
// same allow-lists the gateway applies (the contract's request schemas), before anything is sent: a bad label is
// reported for its container and never reaches the gateway. Nothing a label says can name another node or another
// node's service: the agent publishes through its own node's token only.

export const LABEL_PREFIX = 'postern.';
/** A longer value is refused before it is looked at (a domain is at most 253 characters, a path far less). */
export const LABEL_VALUE_MAX = 255;
/** At most this many services per container (http, tcp and named ones together). */
export const SERVICES_PER_CONTAINER_MAX = 16;

const HTTP_FIELDS = ['port', 'domain', 'path', 'protocol', 'name'] as const;
const TCP_FIELDS = ['port', 'protocol', 'public-port', 'tls', 'domain', 'name'] as const;
/**
 * `postern.http.access.OPTION`: the options of `postern access` (one vocabulary, one parser: args.ts), but no password:
 * a label is shown by `docker inspect` to anyone who may use the engine.
 */
const ACCESS_OPTIONS = [
  'sso-provider',
  'allow-email',
  'allow-email-domain',
  'allow-group',
  'share-links',
  'bypass-path',
  'bypass-network',
  'session',
] as const;
const PASSWORD_OPTIONS = ['password', 'password-file', 'no-password'];

/** What the agent needs to know of a container (from one `docker ps -a` answer; no inspect per container). */
export interface ContainerInfo {
  /** Docker's name without the leading `/`. */
  name: string;
  running: boolean;
  labels: Record<string, string>;
  /** Docker's network mode: `bridge`, `host`, `container:<id>`, a network's name… */
  networkMode: string;
  /** Ports published on the host: container port → host port and the host address it is bound to. */
  published: { privatePort: number; publicPort: number; type: string; ip: string }[];
  /** The container's IPv4 addresses on its networks, in Docker's order. */
  addresses: string[];
}

/** What the node's gateway allows as a backend: a regular node's own address only, a gateway node any host. */
export interface NodeReach {
  /** The node may name a backend host (a gateway node or the gateway's local node). */
  choosesHost: boolean;
}

export type DesiredBody = AgentHttpServiceCreate | AgentTcpServiceCreate;

/** One service a container's labels ask for: the create request (its `source` included) of its type. */
export type DesiredService = {
  source: ServiceSource;
  running: boolean;
} & (
  | {
      type: 'http';
      body: AgentHttpServiceCreate;
      /** What its `postern.http.access*` labels ask for, checked; absent: no access label (`inherit`). */
      access?: ServiceAccessUpdate;
    }
  | { type: 'tcp'; body: AgentTcpServiceCreate }
);

export interface LabelProblem {
  container: string;
  /** `http`, `tcp.db`…, or absent when the problem is the container's as a whole. */
  key?: string;
  message: string;
}

export interface ContainerServices {
  services: DesiredService[];
  problems: LabelProblem[];
}

/** Whether a container carries any Postern label at all. */
export function hasPosternLabels(labels: Record<string, string>): boolean {
  return Object.keys(labels).some((label) => label.startsWith(LABEL_PREFIX));
}

/** The services a container's labels ask for, and what is wrong with the rest. */
export function servicesOfContainer(container: ContainerInfo, reach: NodeReach): ContainerServices {
  const problems: LabelProblem[] = [];
  if (!CONTAINER_NAME_PATTERN.test(container.name)) {
    return { services: [], problems: [{ container: printable(container.name), message: 'unusable container name' }] };
  }
  const problem = (message: string, key?: string) =>
    problems.push({ container: container.name, ...(key === undefined ? {} : { key }), message });

  // Group the labels by service key: postern.http.port → http/port, postern.tcp.db.port → tcp.db/port.
  const groups = new Map<string, Map<string, string>>();
  const accessGroups = new Map<string, Map<string, string>>();
  const withheld = new Set<string>();
  for (const [label, value] of Object.entries(container.labels)) {
    if (!label.startsWith(LABEL_PREFIX)) continue;
    const shownLabel = printable(label);
    const parts = label.slice(LABEL_PREFIX.length).split('.');
    const kind = parts[0];
    // postern.http.access[.OPTION], postern.http.NAME.access[.OPTION]: the service's access policy.
    const accessAt = parts[1] === 'access' ? 1 : parts[2] === 'access' ? 2 : -1;
    if (accessAt > 0 && (kind === 'http' || kind === 'tcp') && parts.length <= accessAt + 2) {
      const key = parts.slice(0, accessAt).join('.');
      const option = parts[accessAt + 1] ?? 'auth';
      // A service whose access labels are refused is not published at all: it would be more open than asked for.
      const refuse = (message: string) => {
        problem(message, key);
        withheld.add(key);
      };
      if (!LABEL_SERVICE_KEY_PATTERN.test(key)) {
        problem(`unknown label ${shownLabel}: expected postern.http.access.OPTION or postern.http.NAME.access.OPTION`);
      } else if (kind !== 'http') {
        refuse(`label ${shownLabel}: access policies are for HTTP services`);
      } else if (PASSWORD_OPTIONS.includes(option)) {
        refuse(
          `label ${shownLabel} refused: a password in a label is shown by "docker inspect"; set it with "postern access ID --password-file FILE" instead`,
        );
      } else if (option !== 'auth' && !(ACCESS_OPTIONS as readonly string[]).includes(option)) {
        refuse(`unknown label ${shownLabel}: an access policy takes ${ACCESS_OPTIONS.join(', ')}`);
      } else if (value.length > LABEL_VALUE_MAX) {
        refuse(`label ${shownLabel} is longer than ${LABEL_VALUE_MAX} characters`);
      } else {
        const group = accessGroups.get(key) ?? new Map<string, string>();
        group.set(option, value);
        accessGroups.set(key, group);
        if (!groups.has(key)) groups.set(key, new Map());
      }
      continue;
    }
    const field = parts.at(-1) ?? '';
    const key = parts.slice(0, -1).join('.');
    if (
      (kind !== 'http' && kind !== 'tcp') ||
      parts.length < 2 ||
      parts.length > 3 ||
      !LABEL_SERVICE_KEY_PATTERN.test(key)
    ) {
      problem(`unknown label ${shownLabel}: expected postern.http.FIELD, postern.tcp.FIELD or postern.http.NAME.FIELD`);
      continue;
    }
    const fields: readonly string[] = kind === 'http' ? HTTP_FIELDS : TCP_FIELDS;
    if (!fields.includes(field)) {
      problem(`unknown label ${shownLabel}: a ${kind} service takes ${fields.join(', ')}`, key);
      continue;
    }
    if (value.length > LABEL_VALUE_MAX) {
      problem(`label ${shownLabel} is longer than ${LABEL_VALUE_MAX} characters`, key);
      continue;
    }
    const group = groups.get(key) ?? new Map<string, string>();
    group.set(field, value);
    groups.set(key, group);
  }
  if (groups.size > SERVICES_PER_CONTAINER_MAX) {
    problem(`asks for ${groups.size} services; at most ${SERVICES_PER_CONTAINER_MAX} per container`);
    return { services: [], problems };
  }

  const services: DesiredService[] = [];
  for (const [key, fields] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    if (withheld.has(key)) continue;
    const outcome = key.startsWith('http')
      ? httpServiceOf(container, key, fields, accessGroups.get(key), reach)
      : tcpServiceOf(container, key, fields, reach);
    if (typeof outcome === 'string') problem(outcome, key);
    else services.push(outcome);
  }
  return { services, problems };
}

function httpServiceOf(
  container: ContainerInfo,
  key: string,
  fields: Map<string, string>,
  accessLabels: Map<string, string> | undefined,
  reach: NodeReach,
): DesiredService | string {
  // A policy the labels get wrong is not published without it: the service would be more open than asked for.
  const access = accessLabels === undefined ? undefined : accessOf(key, accessLabels);
  if (typeof access === 'string') return access;
  const backend = backendOf(container, key, fields.get('port'), 'tcp', reach);
  if (typeof backend === 'string') return backend;
  const protocol = fields.get('protocol');
  const draft = {
    name: fields.get('name') ?? defaultName(container, key),
    domain: fields.get('domain'),
    pathLocation: fields.get('path'),
    ...(protocol === undefined ? {} : { backendProto: protocol }),
    ...backend,
  };
  const service = finish(container, key, 'http', AgentHttpServiceCreateSchema, withoutUndefined(draft));
  return typeof service === 'string' || service.type !== 'http' || access === undefined
    ? service
    : { ...service, access };
}

/** The access labels of one HTTP service, parsed and checked as `postern access` parses and checks its options. */
function accessOf(key: string, labels: Map<string, string>): ServiceAccessUpdate | undefined | string {
  const nameOf = (option: string) => accessLabelOf(key, option);
  const values: AccessOptionValues = {};
  for (const [option, value] of labels) {
    if (option === 'share-links') {
      if (value !== 'true' && value !== 'false') return `${nameOf(option)} must be true or false`;
      values[option] = value === 'true';
    } else values[option] = value.trim();
  }
  let auth;
  try {
    auth = parseAccessOptions(values, nameOf, (message) => {
      throw new AccessLabelError(message);
    });
  } catch (error) {
    if (error instanceof AccessLabelError) return error.message;
    throw error;
  }
  if (auth === undefined) return undefined;
  const checked = checkAccessBody(auth, undefined, nameOf);
  if ('refused' in checked) return checked.refused.map(({ field, message }) => `${field}: ${message}`).join('; ');
  return checked.body;
}

class AccessLabelError extends Error {}

function tcpServiceOf(
  container: ContainerInfo,
  key: string,
  fields: Map<string, string>,
  reach: NodeReach,
): DesiredService | string {
  const protocol = fields.get('protocol') ?? 'tcp';
  if (protocol !== 'tcp' && protocol !== 'udp') return `${labelOf(key, 'protocol')} must be tcp or udp`;
  const backend = backendOf(container, key, fields.get('port'), protocol, reach);
  if (typeof backend === 'string') return backend;
  const tls = fields.get('tls');
  if (tls !== undefined && tls !== 'true' && tls !== 'false') return `${labelOf(key, 'tls')} must be true or false`;
  const publicPort = fields.get('public-port');
  if (publicPort !== undefined && !/^[0-9]{1,5}$/.test(publicPort)) {
    return `${labelOf(key, 'public-port')} must be a port number`;
  }
  const draft = {
    name: fields.get('name') ?? defaultName(container, key),
    proto: protocol,
    ssl: tls === 'true',
    domain: fields.get('domain'),
    port: publicPort === undefined ? undefined : Number(publicPort),
    ...backend,
  };
  return finish(container, key, 'tcp', AgentTcpServiceCreateSchema, withoutUndefined(draft));
}

/**
 * Where the gateway reaches the container's port: the port itself when the container shares the node's network
 * (`network_mode: service:…`/`container:…` or `host`); the host port it is published on (not on loopback, which the
 * tunnel does not reach); on a gateway node, the container's address on its network.
 */
function backendOf(
  container: ContainerInfo,
  key: string,
  text: string | undefined,
  proto: 'tcp' | 'udp',
  reach: NodeReach,
): { backendPort: number; backendHost?: string } | string {
  if (text === undefined) return `${labelOf(key, 'port')} is required (the container's port)`;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    return `${labelOf(key, 'port')} must be a port number (1-65535), not "${printable(text.slice(0, 40))}"`;
  }
  const port = Number(text);
  const mode = container.networkMode;
  if (mode === 'host' || mode.startsWith('container:')) {
    return reach.choosesHost ? { backendPort: port, backendHost: container.addresses[0] ?? '' } : { backendPort: port };
  }
  const published = container.published.filter((entry) => entry.privatePort === port && entry.type === proto);
  const reachable = published.find((entry) => !entry.ip.startsWith('127.') && entry.ip !== '::1');
  if (reachable !== undefined && !reach.choosesHost) return { backendPort: reachable.publicPort };
  if (reach.choosesHost && container.addresses[0] !== undefined) {
    return { backendPort: port, backendHost: container.addresses[0] };
  }
  if (published.length > 0) {
    return `container port ${port} is published on ${published[0]?.ip ?? '127.0.0.1'} only, which the tunnel does not reach: publish it on all addresses`;
  }
  return `container port ${port} is not reachable from the node: publish it (ports: ["${port}:${port}"]) or run the container in the node's network (network_mode: service:postern-node)`;
}

/** Stricter than the gateway's name rule: a label's name is one printable word or phrase. */
const LABEL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

function finish(
  container: ContainerInfo,
  key: string,
  type: 'http' | 'tcp',
  schema: z.ZodType<DesiredBody>,
  draft: Record<string, unknown>,
): DesiredService | string {
  if (typeof draft.name === 'string' && !LABEL_NAME_PATTERN.test(draft.name)) {
    return `${labelOf(key, 'name')}: at most 64 letters, digits, spaces and ._- (starting with a letter or digit)`;
  }
  const checked = schema.safeParse(draft);
  if (!checked.success) {
    return toFieldErrors(checked.error)
      .map((error) => `${labelForField(key, error.field)}: ${error.message}`)
      .join('; ');
  }
  const digest = createHash('sha256')
    .update(JSON.stringify(canonical(checked.data)))
    .digest('hex');
  const source: ServiceSource = { kind: 'docker-labels', container: container.name, key, digest };
  return { type, source, body: { ...checked.data, source }, running: container.running } as DesiredService;
}

/** The label an error of the gateway's schema is about, so the operator knows which label to fix. */
function labelForField(key: string, field: string): string {
  const label: Record<string, string> = {
    name: 'name',
    domain: 'domain',
    pathLocation: 'path',
    backendProto: 'protocol',
    backendPort: 'port',
    backendHost: 'port',
    port: 'public-port',
    ssl: 'tls',
    proto: 'protocol',
  };
  return labelOf(key, label[field] ?? field);
}

const labelOf = (key: string, field: string) => `${LABEL_PREFIX}${key}.${field}`;

/** The label of an access option (`auth` is the mode: `postern.http.access` itself). */
export const accessLabelOf = (key: string, option: string) =>
  option === 'auth' ? `${LABEL_PREFIX}${key}.access` : `${LABEL_PREFIX}${key}.access.${option}`;

/** `web` for the container's `http`/`tcp` service, `web-api` for `http.api`. */
function defaultName(container: ContainerInfo, key: string): string {
  const sub = key.split('.')[1];
  return sub === undefined ? container.name : `${container.name}-${sub}`;
}

function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([key]) => key !== 'source')
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, field]) => [key, canonical(field)]),
    );
  }
  return value;
}

/** A name or value as it may be shown in one log line: control characters escaped, at most 80 characters. */
export function printable(text: string): string {
  const shown = JSON.stringify(text.slice(0, 80)).slice(1, -1);
  return text.length > 80 ? `${shown}…` : shown;
}

/** `--docker-filter LABEL=VALUE`: only containers that also carry this label (several nodes on one engine). */
export function parseDockerFilter(text: string): { key: string; value: string } {
  const match = /^([A-Za-z0-9][A-Za-z0-9._/-]{0,127})=([A-Za-z0-9._/:-]{0,128})$/.exec(text);
  if (!match?.[1] || match[2] === undefined)
    throw new UsageError('--docker-filter must be LABEL=VALUE (letters, digits, ._/-:)');
  return { key: match[1], value: match[2] };
}
