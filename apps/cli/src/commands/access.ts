import {
  ServiceAccessUpdateSchema,
  ShareLinkCreateSchema,
  limits,
  toFieldErrors,
  type AccessPolicy,
  type HttpService,
  type ServiceAccess,
  type ServiceAccessUpdate,
  type ShareLink,
} from '@postern/contract';
import { formatFieldErrors, type AgentApi } from '../api.js';
import type { AuthFlags, Command } from '../args.js';
import { openApi, type CliContext } from '../context.js';
import { CliError, FieldsRefusedError, UsageError } from '../errors.js';
import { checkBody } from './services.js';

// Who may open this node's HTTP services (docs/ACCESS.md) and their share links, over the agent API. A node's token
// may only make a service stricter than its domain's policy: the gateway decides, and its refusal is printed with the
// option it concerns.

const STRICTER_ONLY =
  "A node's token may only make a service stricter than its domain's policy, and cannot change a policy the gateway's operator set.";

/** The access option of each request field: `--OPTION` on the command line, `postern.http.access.OPTION` as a label. */
const OPTION_OF: Record<string, string> = {
  mode: 'auth',
  providerId: 'sso-provider',
  allowEmails: 'allow-email',
  allowEmailDomains: 'allow-email-domain',
  allowGroups: 'allow-group',
  password: 'password-file',
  shareLinks: 'share-links',
  bypassPaths: 'bypass-path',
  bypassNetworks: 'bypass-network',
  sessionSeconds: 'session',
};

/** The option a refused request field stands for, named as the caller names options. */
export function accessOptionOf(field: string, optionName: (option: string) => string): string {
  const option = OPTION_OF[field];
  return option === undefined ? field : optionName(option);
}

const flagName = (option: string) => `--${option}`;

/**
 * The request the access options ask for, checked as the gateway checks it (one checker for the flags and the labels);
 * the refused fields are named as `optionName` names the options.
 */
export function checkAccessBody(
  auth: AuthFlags,
  password: string | undefined,
  optionName: (option: string) => string,
): { body: ServiceAccessUpdate } | { refused: { field: string; message: string }[] } {
  if (auth.mode !== 'protected') return { body: { mode: auth.mode } };
  const body: ServiceAccessUpdate = {
    mode: 'protected',
    providerId: auth.ssoProvider ?? null,
    allowEmails: auth.allowEmails,
    allowEmailDomains: auth.allowEmailDomains,
    allowGroups: auth.allowGroups,
    ...(password !== undefined ? { password } : {}),
    ...(auth.removePassword ? { password: null } : {}),
    shareLinks: auth.shareLinks,
    bypassPaths: auth.bypassPaths,
    bypassNetworks: auth.bypassNetworks,
    ...(auth.sessionSeconds !== undefined ? { sessionSeconds: auth.sessionSeconds } : {}),
  };
  const checked = ServiceAccessUpdateSchema.safeParse(body);
  if (checked.success) return { body: checked.data };
  return {
    refused: toFieldErrors(checked.error).map(({ field, message }) => ({
      field: accessOptionOf(field, optionName),
      message,
    })),
  };
}

/** The first line of the password file, without its line end; the password never appears on the command line. */
async function readPassword(context: CliContext, file: string): Promise<string> {
  const text = await context.system.readText(file);
  if (text === null) throw new UsageError(`Cannot read the password file ${file}: it does not exist`);
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UsageError(`The password file ${file} is empty`);
  return password;
}

/**
 * What the flags ask for, checked as the gateway checks it, before any request. Single sign-on gets its provider
 * later (`withProvider`): by default the domain policy's, which only the service's access view names.
 */
export async function draftAccessBody(context: CliContext, auth: AuthFlags): Promise<ServiceAccessUpdate> {
  const password =
    auth.mode === 'protected' && auth.passwordFile !== undefined
      ? await readPassword(context, auth.passwordFile)
      : undefined;
  const checked = checkAccessBody(auth, password, flagName);
  if ('refused' in checked) throw new CliError(`Validation failed:\n${formatFieldErrors(checked.refused)}`);
  return checked.body;
}

const needsSso = (body: ServiceAccessUpdate): boolean =>
  (body.allowEmails?.length ?? 0) + (body.allowEmailDomains?.length ?? 0) + (body.allowGroups?.length ?? 0) > 0;

/** An allow list without --sso-provider means the domain policy's provider. */
async function withProvider(api: AgentApi, id: number, body: ServiceAccessUpdate): Promise<ServiceAccessUpdate> {
  if (body.mode !== 'protected' || body.providerId != null || !needsSso(body)) return body;
  const providerId = (await api.getServiceAccess(id)).domainPolicy?.providerId ?? null;
  if (providerId === null)
    throw new UsageError(
      "--allow-email, --allow-email-domain and --allow-group sign visitors in through an identity provider, and the domain's access policy names none: pass --sso-provider ID (ask the gateway's operator which)",
    );
  return { ...body, providerId };
}

/** Sends the policy; a refusal names each option the gateway refused, and why. */
async function sendAccess(api: AgentApi, id: number, body: ServiceAccessUpdate): Promise<ServiceAccess> {
  try {
    return await api.updateServiceAccess(id, await withProvider(api, id, body));
  } catch (error) {
    if (error instanceof FieldsRefusedError)
      throw new CliError(
        `The gateway refused the access policy of http service ${id}:\n${formatFieldErrors(
          error.fieldErrors.map(({ field, message }) => ({ field: accessOptionOf(field, flagName), message })),
        )}\n${STRICTER_ONLY}`,
      );
    throw error;
  }
}

/**
 * `expose http … --auth …`: the service is created disabled, gets its policy, then is enabled, so it is never served
 * under its domain's policy alone. A refused policy deletes the new service again: nothing is published.
 */
export async function exposeWithAccess(
  api: AgentApi,
  create: () => Promise<HttpService>,
  body: ServiceAccessUpdate,
): Promise<{ service: HttpService; access: ServiceAccess }> {
  const created = await create();
  let access: ServiceAccess;
  try {
    access = await sendAccess(api, created.id, body);
  } catch (error) {
    const undo = await api.deleteService('http', created.id).then(
      () => 'Nothing was published: the new service was deleted again.',
      () => `The new service ${created.id} stays disabled; delete it with "postern rm http ${created.id}".`,
    );
    if (error instanceof CliError) throw new CliError(`${error.message}\n${undo}`, error.exitCode);
    throw error;
  }
  await api.setServiceEnabled('http', created.id, true);
  return { service: { ...created, enabled: true }, access };
}

// ---- Printing -------------------------------------------------------------------------------------------------

const UNITS: [number, string][] = [
  [86_400, 'd'],
  [3600, 'h'],
  [60, 'm'],
  [1, 's'],
];

export function formatSeconds(seconds: number): string {
  const [size, unit] = UNITS.find(([step]) => seconds % step === 0) ?? [1, 's'];
  return `${seconds / size}${unit}`;
}

function describePolicy(policy: AccessPolicy, indent: string): string[] {
  if (policy.mode === 'public') return [`${indent}public: anyone can open it`];
  const lines = [`${indent}protected:`];
  const add = (label: string, value: string) => lines.push(`${indent}  ${label.padEnd(16)}${value}`);
  if (policy.providerId !== null) {
    add('single sign-on', `${policy.providerName ?? 'provider'} (id ${policy.providerId})`);
    if (policy.allowEmails.length > 0) add('emails', policy.allowEmails.join(', '));
    if (policy.allowEmailDomains.length > 0) add('email domains', policy.allowEmailDomains.join(', '));
    if (policy.allowGroups.length > 0) add('groups', policy.allowGroups.join(', '));
  }
  add('password', policy.passwordSet ? 'set' : 'none');
  add('share links', policy.shareLinks ? 'allowed' : 'no');
  if (policy.bypassPaths.length > 0) add('no sign-in', `below ${policy.bypassPaths.join(', ')}`);
  if (policy.bypassNetworks.length > 0) add('no sign-in', `from ${policy.bypassNetworks.join(', ')}`);
  add('sessions', formatSeconds(policy.sessionSeconds));
  return lines;
}

const SOURCE_TEXT: Record<ServiceAccess['effective']['source'], string> = {
  service: "the service's own policy",
  domain: "the domain's policy",
  none: 'no policy',
};

export function formatAccess(access: ServiceAccess): string {
  const lines = [
    `Service ${access.serviceId}${access.domain ? ` on ${access.domain}` : ' (no domain: always public)'}`,
    `Applied (${SOURCE_TEXT[access.effective.source]}):`,
    ...describePolicy(access.effective, '  '),
  ];
  if (access.own === null) lines.push("Own policy: none (inherits the domain's)");
  else {
    lines.push(`Own policy (set by ${access.setBy === 'admin' ? "the gateway's operator" : 'this node'}):`);
    lines.push(...describePolicy(access.own, '  '));
    if (access.effective.source === 'domain')
      lines.push(
        "  (it lets in more than the domain's policy, which the operator made stricter: the domain's applies)",
      );
  }
  return `${lines.join('\n')}\n`;
}

/** One line for `expose`: what protects the new service. */
export function summarizeAccess(access: ServiceAccess): string {
  const policy = access.effective;
  if (policy.mode === 'public') return 'public';
  const ways = [
    policy.providerId !== null && `single sign-on with ${policy.providerName ?? `provider ${policy.providerId}`}`,
    policy.passwordSet && 'password',
    policy.shareLinks && 'share links',
  ].filter((way): way is string => typeof way === 'string');
  return `protected: ${ways.join(', ')}`;
}

// ---- Commands -------------------------------------------------------------------------------------------------

export async function runAccess(context: CliContext, command: Extract<Command, { kind: 'access' }>): Promise<number> {
  const body = command.auth ? await draftAccessBody(context, command.auth) : null;
  const api = await openApi(context, command.connection);
  const access = body ? await sendAccess(api, command.id, body) : await api.getServiceAccess(command.id);
  if (command.json) context.stdout.write(`${JSON.stringify(access, null, 2)}\n`);
  else context.stdout.write(`${body ? `Access of http service ${command.id} set.\n` : ''}${formatAccess(access)}`);
  return 0;
}

function linkState(link: ShareLink, now: number): string {
  if (link.revoked) return 'revoked';
  if (link.expiresAt !== null && Date.parse(link.expiresAt) <= now) return 'expired';
  return 'active';
}

export function formatShareLinks(links: readonly ShareLink[], now: number): string {
  if (links.length === 0) return 'No share links yet: create one with "postern share create ID NAME".\n';
  const rows = [
    ['ID', 'NAME', 'BELOW', 'EXPIRES', 'STATE', 'USES'],
    ...links.map((link) => [
      String(link.id),
      link.name,
      link.pathPrefix ?? '(all)',
      link.expiresAt ?? 'never',
      linkState(link, now),
      String(link.uses),
    ]),
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

export async function runShareList(
  context: CliContext,
  command: Extract<Command, { kind: 'share-list' }>,
): Promise<number> {
  const api = await openApi(context, command.connection);
  const links: ShareLink[] = [];
  for (let page = 1; ; page++) {
    const answer = await api.listShareLinks(command.id, page, limits.listMaxLimit);
    links.push(...answer.data);
    if (answer.data.length === 0 || links.length >= answer.total) break;
  }
  context.stdout.write(
    command.json ? `${JSON.stringify(links, null, 2)}\n` : formatShareLinks(links, context.system.now()),
  );
  return 0;
}

export async function runShareCreate(
  context: CliContext,
  command: Extract<Command, { kind: 'share-create' }>,
): Promise<number> {
  const body = checkBody(ShareLinkCreateSchema, {
    name: command.name,
    ...(command.path === undefined ? {} : { pathPrefix: command.path }),
    ...(command.ttl === undefined ? {} : { ttl: command.ttl }),
  });
  const api = await openApi(context, command.connection);
  const link = await api.createShareLink(command.id, body);
  context.stdout.write(
    `Share link ${link.id} "${link.name}" of http service ${command.id}` +
      `${link.pathPrefix ? ` (below ${link.pathPrefix})` : ''}, ${link.expiresAt ? `until ${link.expiresAt}` : 'until revoked'}:\n` +
      `${link.url}\n`,
  );
  context.stderr.write('The link is shown only this once: store it securely.\n');
  return 0;
}

export async function runShareRevoke(
  context: CliContext,
  command: Extract<Command, { kind: 'share-revoke' }>,
): Promise<number> {
  const api = await openApi(context, command.connection);
  await api.revokeShareLink(command.id, command.linkId);
  context.stdout.write(`Revoked share link ${command.linkId} of http service ${command.id}\n`);
  return 0;
}
