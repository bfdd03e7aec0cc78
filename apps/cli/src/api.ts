import { z } from 'zod';
import {
  AgentConfigSchema,
  HttpServiceSchema,
  MessageErrorSchema,
  NodeSchema,
  TcpServiceSchema,
  ValidationErrorSchema,
  buildPath,
  isWellFormedPat,
  listOf,
  routes,
  type AgentConfig,
  type HttpService,
  type HttpServiceCreate,
  type ListResponse,
  type Node,
  type ServiceType,
  type TcpService,
  type TcpServiceCreate,
} from '@postern/contract';
import { CliError, EXIT_BAD_TOKEN, GatewayUnreachableError, TokenRejectedError, UsageError } from './errors.js';
import { checkGatewayUrl } from './gateway-url.js';
import { createHttpClient, RequestTimeoutError, type HttpAnswer, type HttpClient } from './http-client.js';

// Client of the gateway's agent API. Every failure becomes one readable CliError; the token is only ever sent
// in the Authorization header and never appears in a message.

export const REQUEST_TIMEOUT_MS = 10_000;

export interface AgentApi {
  getNode(): Promise<Node>;
  getConfig(): Promise<AgentConfig>;
  listServices(type: 'http', page: number, limit: number): Promise<ListResponse<HttpService>>;
  listServices(type: 'tcp', page: number, limit: number): Promise<ListResponse<TcpService>>;
  createHttpService(body: HttpServiceCreate): Promise<HttpService>;
  createTcpService(body: TcpServiceCreate): Promise<TcpService>;
  setServiceEnabled(type: ServiceType, id: number, enabled: boolean): Promise<void>;
  deleteService(type: ServiceType, id: number): Promise<void>;
}

/** Where and how to reach the gateway: what flags, the stored settings and the environment resolve to. */
export interface GatewayConnection {
  url: string;
  token: string;
  /** `sha256:<base64>`: trust exactly this certificate instead of the CA store. */
  pin?: string;
  /** Allow plain HTTP to a public address. */
  insecure?: boolean;
}

type Route = (typeof routes)[keyof typeof routes];

export const MALFORMED_TOKEN_MESSAGE =
  'Malformed access token: expected "pstn_" and 42 letters or digits with a valid checksum; copy it again from the console';

/** Rejects a mistyped token, a bad or plain-HTTP public URL, or a pin without TLS before any request leaves the machine. */
export function checkConnection(connection: GatewayConnection): URL {
  if (!isWellFormedPat(connection.token)) throw new CliError(MALFORMED_TOKEN_MESSAGE, EXIT_BAD_TOKEN);
  const url = checkGatewayUrl(connection.url, { insecure: connection.insecure === true });
  if (connection.pin !== undefined && url.protocol !== 'https:') {
    // A pin asks for a verified TLS connection: plain HTTP would silently drop that.
    throw new UsageError(`A certificate pin needs an https:// gateway URL, not ${connection.url}`);
  }
  return url;
}

export function createAgentApi(connection: GatewayConnection, options: { client?: HttpClient; timeoutMs?: number } = {}): AgentApi {
  const base = checkConnection(connection);
  const client = options.client ?? createHttpClient(connection.pin === undefined ? {} : { pin: connection.pin });
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const origin = base.href.replace(/\/+$/, '');

  async function call<T extends z.ZodType>(
    route: Route,
    params: Record<string, string | number>,
    schema: T,
    request: { body?: unknown; query?: string } = {},
  ): Promise<z.infer<T>> {
    const { body, query = '' } = request;
    let answer: HttpAnswer;
    try {
      answer = await client({
        method: route.method,
        url: origin + buildPath(route.path, params) + query,
        headers: {
          authorization: `Bearer ${connection.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        timeoutMs,
      });
    } catch (error) {
      // A certificate that did not pass already says what to do; anything else is "cannot reach".
      if (error instanceof CliError) throw error;
      throw new GatewayUnreachableError(connection.url, describeNetworkError(error));
    }
    const payload = parseJson(answer.body);
    if (answer.status >= 300 && answer.status <= 399 && answer.location !== undefined) {
      throw new CliError(`The gateway at ${connection.url} redirects to ${answer.location} (HTTP ${answer.status}): pass the gateway's https:// address as --url`);
    }
    if (answer.status < 200 || answer.status > 299) throw toApiError(answer.status, payload, connection.url);
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw new CliError(`Unexpected answer from the gateway at ${connection.url} (${route.method} ${route.path}); is this a Postern gateway of the same version?`);
    }
    return parsed.data;
  }

  const anything = z.unknown();
  return {
    getNode: () => call(routes.agentNode, {}, NodeSchema),
    getConfig: () => call(routes.agentConfig, {}, AgentConfigSchema),
    listServices: ((type: ServiceType, page: number, limit: number) =>
      call(routes.agentListServices, { type }, listOf(type === 'http' ? HttpServiceSchema : TcpServiceSchema), {
        query: `?page=${page}&limit=${limit}`,
      })) as AgentApi['listServices'],
    createHttpService: (body) => call(routes.agentCreateHttpService, {}, HttpServiceSchema, { body }),
    createTcpService: (body) => call(routes.agentCreateTcpService, {}, TcpServiceSchema, { body }),
    async setServiceEnabled(type, id, enabled) {
      await call(enabled ? routes.agentEnableService : routes.agentDisableService, { type, id }, anything);
    },
    async deleteService(type, id) {
      await call(routes.agentDeleteService, { type, id }, anything);
    },
  };
}

/** Field errors as the user reads them: one `field: message` per line. */
export function formatFieldErrors(errors: { field: string; message: string }[]): string {
  return errors.map((error) => `  ${error.field}: ${error.message}`).join('\n');
}

function toApiError(status: number, payload: unknown, url: string): CliError {
  const validation = ValidationErrorSchema.safeParse(payload);
  if (status === 422 && validation.success) {
    return new CliError(`${validation.data.message}:\n${formatFieldErrors(validation.data.errors.body)}`);
  }
  const message = MessageErrorSchema.safeParse(payload);
  const text = message.success ? message.data.message : `HTTP ${status}`;
  if (status === 401) return new TokenRejectedError(text);
  if (status === 404 && !message.success) {
    return new CliError(`The server at ${url} has no agent API (HTTP 404): is this the gateway's URL?`);
  }
  return new CliError(`The gateway answered: ${text}${message.success ? ` (HTTP ${status})` : ''}`);
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function describeNetworkError(error: unknown): string {
  if (error instanceof RequestTimeoutError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
