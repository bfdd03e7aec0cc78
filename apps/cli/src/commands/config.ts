import {
  ApiError,
  UnexpectedAnswerError,
  createApiClient,
  operations,
  type ConfigApplyResult,
  type ConfigPlan,
  type ConfigDocument,
} from '@postern/contract';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { agentTransport, REQUEST_TIMEOUT_MS, toCliError } from '../api.js';
import type { Command } from '../args.js';
import { httpClientFor, resolveConfigDir, type CliContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { checkGatewayUrl } from '../gateway-url.js';
import { parsePin } from '../pin.js';
import { readSettings } from '../store.js';

// `postern admin export|plan|apply` (docs/CONFIG-AS-CODE.md): the gateway's configuration as one document. These
// are the operator's calls (a console session), not a node's: the command signs in as the console's admin with a
// password from a file or the environment (never an argument, which `ps` shows) and signs out again. An admin with
// two-factor sign-in gives the code the same way, or types it when asked on a terminal. The gateway has no personal
// access tokens of accounts (its access tokens are nodes'), so a session is the only way in.

type ConfigCommand = Extract<Command, { kind: 'config' }>;

/** Applying a large document runs every step through the API's own checks: give it longer than one call. */
const APPLY_TIMEOUT_MS = 120_000;

export async function runConfig(context: CliContext, command: ConfigCommand): Promise<number> {
  const document = command.file === undefined ? undefined : await readDocument(context, command.file);
  const session = await signIn(context, command);
  try {
    if (command.action === 'export') {
      const exported = await session.call(operations.exportConfig);
      context.stdout.write(command.json ? `${JSON.stringify(exported, null, 2)}\n` : stringifyYaml(exported));
      return 0;
    }
    // The gateway checks the document (422 naming each problem by its place in it).
    const body = { document: document as ConfigDocument, prune: command.prune };
    if (command.action === 'plan' || command.dryRun) {
      const plan = await session.call(operations.planConfig, { body });
      context.stdout.write(command.json ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan));
      return plan.errors.length > 0 ? 1 : 0;
    }
    const result = await session.call(operations.applyConfig, { body });
    context.stdout.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : formatApply(result));
    return 0;
  } finally {
    await session.call(operations.logout).catch(() => undefined);
  }
}

async function readDocument(context: CliContext, file: string): Promise<unknown> {
  const text = await context.system.readText(file === '-' ? '/dev/stdin' : file);
  if (text === null) throw new UsageError(`-f: ${file} does not exist`);
  try {
    // YAML is a superset of JSON: one parser reads both.
    return parseYaml(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    throw new CliError(`${file} is not YAML or JSON: ${reason}`);
  }
}

interface Session {
  call: ReturnType<typeof createApiClient>['call'];
}

async function signIn(context: CliContext, command: ConfigCommand): Promise<Session> {
  const flags = command.operator;
  const configDir = resolveConfigDir(context, flags.configDir);
  const stored = flags.url === undefined ? await readSettings(context.system, configDir).catch(() => null) : null;
  const url = flags.url ?? stored?.url ?? context.env.url;
  if (url === undefined) throw new UsageError('No gateway URL: pass --url URL (or set POSTERN_URL)');
  const pin = flags.pin ?? (flags.url === undefined ? stored?.pin : undefined) ?? envPin(context.env.pin) ?? undefined;
  const insecure = flags.insecure === true || (flags.url === undefined && stored?.insecure === true);
  const base = checkGatewayUrl(url, { insecure });
  if (pin !== undefined && base.protocol !== 'https:') {
    throw new UsageError(`A certificate pin needs an https:// gateway URL, not ${url}`);
  }
  const password = await readPassword(context, flags.passwordFile);
  let token: string | null = null;
  const api = createApiClient({
    transport: agentTransport(
      httpClientFor(context, pin),
      command.action === 'apply' ? APPLY_TIMEOUT_MS : REQUEST_TIMEOUT_MS,
      url,
    ),
    baseUrl: base.href,
    token: () => token,
  });
  const call: Session['call'] = async (operation, ...args) => {
    try {
      return await api.call(operation, ...args);
    } catch (error) {
      if (error instanceof ApiError) {
        if (error.status === 401) throw new CliError(`The gateway refused the sign-in as "${flags.user}"`);
        throw toCliError(error, url);
      }
      if (error instanceof UnexpectedAnswerError) {
        throw new CliError(
          `Unexpected answer from the gateway at ${url}; is this a Postern gateway of the same version?`,
        );
      }
      throw error;
    }
  };
  const answer = await call(operations.login, { body: { username: flags.user, password } });
  if ('token' in answer) {
    token = answer.token;
    return { call };
  }
  const code = await readSecondFactor(context, flags.otpFile, flags.user);
  try {
    token = (await api.call(operations.loginSecondFactor, { body: { challenge: answer.challenge, code } })).token;
  } catch (error) {
    // The code itself is never repeated: a recovery code is a secret.
    if (error instanceof ApiError && error.status === 401) {
      throw new CliError(`The gateway refused the second-factor code for "${flags.user}" (a code is accepted once)`);
    }
    if (error instanceof ApiError) throw toCliError(error, url);
    throw error;
  }
  return { call };
}

/** The second-factor code: `--otp-file`, else POSTERN_ADMIN_OTP, else asked on the terminal (never an argument). */
async function readSecondFactor(context: CliContext, file: string | undefined, user: string): Promise<string> {
  let code: string | undefined;
  if (file !== undefined) {
    const text = await context.system.readText(file === '-' ? '/dev/stdin' : file);
    if (text === null) throw new UsageError(`--otp-file: ${file} does not exist`);
    code = text.split('\n', 1)[0]?.trim();
  } else if (context.env.adminOtp !== undefined) {
    code = context.env.adminOtp.trim();
  } else if (context.askSecret !== undefined) {
    code = (await context.askSecret(`Two-factor code for "${user}": `)).trim();
  } else {
    throw new UsageError(
      `"${user}" signs in with a second factor: pass --otp-file FILE (- for standard input), set POSTERN_ADMIN_OTP, or run postern admin on a terminal to be asked`,
    );
  }
  if (code === undefined || code === '') throw new UsageError('No two-factor code given');
  return code;
}

async function readPassword(context: CliContext, file: string | undefined): Promise<string> {
  if (file === undefined) {
    if (context.env.adminPassword === undefined) {
      throw new UsageError(
        'No password: pass --password-file FILE (- for standard input) or set POSTERN_ADMIN_PASSWORD',
      );
    }
    return context.env.adminPassword;
  }
  const text = await context.system.readText(file === '-' ? '/dev/stdin' : file);
  if (text === null) throw new UsageError(`--password-file: ${file} does not exist`);
  const password = text.split('\n', 1)[0] ?? '';
  if (password === '') throw new UsageError(`--password-file: ${file} holds no password`);
  return password;
}

function envPin(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return parsePin(text);
  } catch (error) {
    throw new UsageError(`POSTERN_PIN: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const SIGNS = { create: '+', update: '~', delete: '-' } as const;

/** The plan as a person reads it: one line per object, its changed fields below, then errors and notes. */
export function formatPlan(plan: ConfigPlan): string {
  const lines: string[] = [];
  for (const change of plan.changes) {
    lines.push(`${SIGNS[change.action]} ${change.action} ${change.kind} ${change.name}`);
    for (const field of change.fields) {
      lines.push(`    ${field.field}: ${JSON.stringify(field.before)} → ${JSON.stringify(field.after)}`);
    }
  }
  if (plan.changes.length === 0) lines.push('No changes: the gateway matches the document.');
  for (const problem of plan.errors) lines.push(`error: ${problem.path}: ${problem.message}`);
  for (const note of plan.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}

function formatApply(result: ConfigApplyResult): string {
  const tokens = result.tokens.map(
    (token) => `token ${token.node}/${token.name}: ${token.token}  (shown once: store it now)`,
  );
  return `${formatPlan(result.plan)}Applied ${result.applied} change${result.applied === 1 ? '' : 's'}.\n${tokens.map((line) => `${line}\n`).join('')}`;
}
