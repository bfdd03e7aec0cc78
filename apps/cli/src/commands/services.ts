import {
  HttpServiceCreateSchema,
  TcpServiceCreateSchema,
  limits,
  toFieldErrors,
  type HttpService,
  type ListResponse,
  type TcpService,
} from '@postern/contract';
import type { z } from 'zod';
import { formatFieldErrors } from '../api.js';
import type { Command } from '../args.js';
import { openApi, type CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { draftAccessBody, exposeWithAccess, summarizeAccess } from './access.js';

// expose / services / enable / disable / rm: thin wrappers over the agent API.

export async function runExposeHttp(
  context: CliContext,
  command: Extract<Command, { kind: 'expose-http' }>,
): Promise<number> {
  const body = checkBody(HttpServiceCreateSchema, {
    name: command.name,
    backendPort: command.port,
    domain: command.domain,
    ...(command.path === undefined ? {} : { pathLocation: command.path }),
    ...(command.proto === undefined ? {} : { backendProto: command.proto }),
    ...(command.host === undefined ? {} : { backendHost: command.host }),
    ...ipLists(command),
    ...(command.ttl === undefined ? {} : { ttl: command.ttl }),
  });
  // The policy is checked (and its password file read) before anything is created.
  const access = command.auth ? await draftAccessBody(context, command.auth) : null;
  const api = await openApi(context, command.connection);
  if (access === null) {
    const service = await api.createHttpService(body);
    context.stdout.write(
      `Exposed http service ${service.id} "${service.name}" at ${service.publicAccess}${untilText(service)}\n`,
    );
    return 0;
  }
  const exposed = await exposeWithAccess(api, () => api.createHttpService({ ...body, enabled: false }), access);
  context.stdout.write(
    `Exposed http service ${exposed.service.id} "${exposed.service.name}" at ${exposed.service.publicAccess}` +
      `${untilText(exposed.service)} (${summarizeAccess(exposed.access)})\n`,
  );
  return 0;
}

export async function runExposeTcp(
  context: CliContext,
  command: Extract<Command, { kind: 'expose-tcp' }>,
): Promise<number> {
  const body = checkBody(TcpServiceCreateSchema, {
    name: command.name,
    backendPort: command.port,
    proto: command.udp ? 'udp' : 'tcp',
    ssl: command.tls,
    ...(command.domain === undefined ? {} : { domain: command.domain }),
    ...(command.publicPort === undefined ? {} : { port: command.publicPort }),
    ...(command.host === undefined ? {} : { backendHost: command.host }),
    ...ipLists(command),
    ...(command.ttl === undefined ? {} : { ttl: command.ttl }),
  });
  const api = await openApi(context, command.connection);
  const service = await api.createTcpService(body);
  context.stdout.write(
    `Exposed ${service.proto} service ${service.id} "${service.name}" at ${service.publicAccess}${untilText(service)}\n`,
  );
  return 0;
}

/** A temporary exposure says when it ends (the gateway disables the service then). */
function untilText(service: { expiresAt?: string | null | undefined }): string {
  return service.expiresAt ? ` until ${service.expiresAt}` : '';
}

export async function runServices(
  context: CliContext,
  command: Extract<Command, { kind: 'services' }>,
): Promise<number> {
  const api = await openApi(context, command.connection);
  const http = await collectPages((page) => api.listServices('http', page, limits.listMaxLimit));
  const tcp = await collectPages((page) => api.listServices('tcp', page, limits.listMaxLimit));
  context.stdout.write(command.json ? `${JSON.stringify({ http, tcp }, null, 2)}\n` : formatServices(http, tcp));
  return 0;
}

export async function runServiceAction(
  context: CliContext,
  command: Extract<Command, { kind: 'service-action' }>,
): Promise<number> {
  const api = await openApi(context, command.connection);
  if (command.action === 'rm') {
    await api.deleteService(command.type, command.id);
    context.stdout.write(`Deleted ${command.type} service ${command.id}\n`);
  } else {
    await api.setServiceEnabled(command.type, command.id, command.action === 'enable');
    context.stdout.write(
      `${command.action === 'enable' ? 'Enabled' : 'Disabled'} ${command.type} service ${command.id}\n`,
    );
  }
  return 0;
}

export function formatServices(http: HttpService[], tcp: TcpService[]): string {
  if (http.length === 0 && tcp.length === 0)
    return 'No services yet: publish one with "postern expose http|tcp NAME --port P".\n';
  const rows = [
    ['TYPE', 'ID', 'NAME', 'BACKEND', 'PUBLIC', 'STATE'],
    ...http.map((s) => [
      'http',
      String(s.id),
      s.name,
      `${s.backendProto}://${s.backendHost}:${s.backendPort}`,
      s.publicAccess,
      stateOf(s),
    ]),
    ...tcp.map((s) => [s.proto, String(s.id), s.name, `${s.backendHost}:${s.backendPort}`, s.publicAccess, stateOf(s)]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

function stateOf(service: HttpService | TcpService): string {
  if (service.applyError !== null) return `error: ${service.applyError}`;
  return service.enabled ? 'enabled' : 'disabled';
}

/** Every page of a list: a node rarely has more than one page, but the gateway caps `limit`. */
async function collectPages<T>(fetchPage: (page: number) => Promise<ListResponse<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await fetchPage(page);
    items.push(...answer.data);
    if (answer.data.length === 0 || items.length >= answer.total) return items;
  }
}

/** The same check the gateway runs, so a typo is reported before any request, in the gateway's words. */
export function checkBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (!result.success) throw new CliError(`Validation failed:\n${formatFieldErrors(toFieldErrors(result.error))}`);
  return result.data;
}

function ipLists(command: { allow: string[]; block: string[] }): { allowedIps?: string[]; blockedIps?: string[] } {
  return {
    ...(command.allow.length > 0 ? { allowedIps: command.allow } : {}),
    ...(command.block.length > 0 ? { blockedIps: command.block } : {}),
  };
}
