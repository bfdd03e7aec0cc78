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
import { CliError, EXIT_BAD_TOKEN, GatewayUnreachableError, TokenRejectedError } from './errors.js';

// Client of the gateway's agent API. Every failure becomes one readable CliError; the token is only ever sent
// in the Authorization header and never appears in a message.

export const REQUEST_TIMEOUT_MS = 10_000;

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

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

type Route = (typeof routes)[keyof typeof routes];

export const MALFORMED_TOKEN_MESSAGE =
  'Malformed access token: expected "pstn_" and 42 letters or digits with a valid checksum; copy it again from the console';

/** Rejects a bad URL or a mistyped token before any request leaves the machine. */
export function checkCredentials(url: string, token: string): URL {
  if (!isWellFormedPat(token)) throw new CliError(MALFORMED_TOKEN_MESSAGE, EXIT_BAD_TOKEN);
  return parseGatewayUrl(url);
}

export function parseGatewayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`Invalid gateway URL ${JSON.stringify(url)}: expected http(s)://host[:port]`);
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username !== '' || parsed.password !== '') {
    throw new CliError(`Invalid gateway URL ${JSON.stringify(url)}: expected http(s)://host[:port]`);
  }
  return parsed;
}

export function createAgentApi(options: { url: string; token: string; fetch?: FetchLike; timeoutMs?: number }): AgentApi {
  const base = checkCredentials(options.url, options.token);
  const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const origin = base.href.replace(/\/+$/, '');

  async function call<T extends z.ZodType>(
    route: Route,
    params: Record<string, string | number>,
    schema: T,
    request: { body?: unknown; query?: string } = {},
  ): Promise<z.infer<T>> {
    const { body, query = '' } = request;
    const url = origin + buildPath(route.path, params) + query;
    let response: Response;
    let payload: unknown;
    try {
      response = await doFetch(url, {
        method: route.method,
        headers: {
          authorization: `Bearer ${options.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      // Inside the try: the timeout also covers the body, and a connection can drop half-way through it.
      payload = await readJson(response);
    } catch (error) {
      throw new GatewayUnreachableError(options.url, describeNetworkError(error, timeoutMs));
    }
    if (!response.ok) throw toApiError(response.status, payload, options.url);
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw new CliError(`Unexpected answer from the gateway at ${options.url} (${route.method} ${route.path}); is this a Postern gateway of the same version?`);
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

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  // undici wraps the socket error (ECONNREFUSED, ENOTFOUND, certificate problems) in `cause`.
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message) return cause.message;
  if (cause instanceof AggregateError && cause.errors[0] instanceof Error) return String(cause.errors[0].message);
  return error instanceof Error ? error.message : String(error);
}
