import {
  ApiError,
  UnexpectedAnswerError,
  createApiClient,
  isWellFormedPat,
  operations,
  routes,
  type AgentConfig,
  type AnyService,
  type HttpService,
  type AgentHttpServiceCreate,
  type ListResponse,
  type LabelProblemReport,
  type Node,
  type ServiceAccess,
  type ServiceAccessUpdate,
  type ServiceType,
  type ShareLink,
  type ShareLinkCreate,
  type ShareLinkCreated,
  type TcpService,
  type AgentTcpServiceCreate,
  type Transport,
} from '@postern/contract';
import {
  CliError,
  EXIT_BAD_TOKEN,
  FieldsRefusedError,
  GatewayUnreachableError,
  TokenRejectedError,
  UsageError,
} from './errors.js';
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
  createHttpService(body: AgentHttpServiceCreate): Promise<HttpService>;
  createTcpService(body: AgentTcpServiceCreate): Promise<TcpService>;
  setServiceEnabled(type: ServiceType, id: number, enabled: boolean): Promise<void>;
  deleteService(type: ServiceType, id: number): Promise<void>;
  setGatewayNetworks(gatewayNetworks: string[]): Promise<Node>;
  /** Replaces what the gateway shows on the node's page about its containers' labels. */
  reportLabelProblems(problems: LabelProblemReport[]): Promise<void>;
  getServiceAccess(id: number): Promise<ServiceAccess>;
  updateServiceAccess(id: number, body: ServiceAccessUpdate): Promise<ServiceAccess>;
  listShareLinks(id: number, page: number, limit: number): Promise<ListResponse<ShareLink>>;
  createShareLink(id: number, body: ShareLinkCreate): Promise<ShareLinkCreated>;
  revokeShareLink(id: number, linkId: number): Promise<ShareLink>;
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

export const MALFORMED_TOKEN_MESSAGE =
  'Malformed access token: expected "pstn_" and 42 letters or digits with a valid checksum; copy it again from the console';

/**
 * Rejects a mistyped token, a bad or plain-HTTP public URL, or a pin without TLS before any request leaves the machine.
 */
export function checkConnection(connection: GatewayConnection): URL {
  if (!isWellFormedPat(connection.token)) throw new CliError(MALFORMED_TOKEN_MESSAGE, EXIT_BAD_TOKEN);
  const url = checkGatewayUrl(connection.url, { insecure: connection.insecure === true });
  if (connection.pin !== undefined && url.protocol !== 'https:') {
    // A pin asks for a verified TLS connection: plain HTTP would silently drop that.
    throw new UsageError(`A certificate pin needs an https:// gateway URL, not ${connection.url}`);
  }
  return url;
}

/**
 * The contract's client over the CLI's own HTTP client (its TLS and pinning rules). Failures to reach the gateway
 * and redirects become CliErrors here; error answers come back as the client's ApiError.
 */
export function agentTransport(client: HttpClient, timeoutMs: number, gatewayUrl: string): Transport {
  return async (request) => {
    let answer: HttpAnswer;
    try {
      answer = await client({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        timeoutMs,
      });
    } catch (error) {
      // A certificate that did not pass already says what to do; anything else is "cannot reach".
      if (error instanceof CliError) throw error;
      throw new GatewayUnreachableError(gatewayUrl, describeNetworkError(error));
    }
    if (answer.status >= 300 && answer.status <= 399 && answer.location !== undefined) {
      throw new CliError(
        `The gateway at ${gatewayUrl} redirects to ${answer.location} (HTTP ${answer.status}): pass the gateway's https:// address as --url`,
      );
    }
    return { status: answer.status, headers: {}, body: answer.body };
  };
}

const isHttpService = (service: AnyService): service is HttpService => 'pathLocation' in service;

export function createAgentApi(
  connection: GatewayConnection,
  options: { client?: HttpClient; timeoutMs?: number } = {},
): AgentApi {
  const base = checkConnection(connection);
  const client = options.client ?? createHttpClient(connection.pin === undefined ? {} : { pin: connection.pin });
  const api = createApiClient({
    transport: agentTransport(client, options.timeoutMs ?? REQUEST_TIMEOUT_MS, connection.url),
    baseUrl: base.href,
    token: connection.token,
  });

  /** Every failure as one readable CliError. */
  const call: typeof api.call = async (operation, ...args) => {
    try {
      return await api.call(operation, ...args);
    } catch (error) {
      if (error instanceof ApiError) throw toCliError(error, connection.url);
      if (error instanceof UnexpectedAnswerError) {
        throw new CliError(
          `Unexpected answer from the gateway at ${connection.url} (${operation.method} ${operation.path}); is this a Postern gateway of the same version?`,
        );
      }
      throw error;
    }
  };

  async function listServices(type: ServiceType, page: number, limit: number): Promise<ListResponse<AnyService>> {
    const list = await call(operations.agentListServices, { params: { type }, query: { page, limit } });
    if (list.data.some((service) => isHttpService(service) !== (type === 'http'))) {
      throw new CliError(
        `Unexpected answer from the gateway at ${connection.url} (a ${type} list with other services); is this a Postern gateway of the same version?`,
      );
    }
    return list;
  }

  return {
    getNode: () => call(operations.agentNode),
    getConfig: () => call(operations.agentConfig),
    // The check above makes every row of the asked type.
    listServices: listServices as AgentApi['listServices'],
    createHttpService: (body) => call(operations.agentCreateHttpService, { body }),
    createTcpService: (body) => call(operations.agentCreateTcpService, { body }),
    // The bare route: the answer is not used, and an answer of another shape must not report a done change as failed.
    async setServiceEnabled(type, id, enabled) {
      await call(enabled ? routes.agentEnableService : routes.agentDisableService, { params: { type, id } });
    },
    deleteService: (type, id) => call(operations.agentDeleteService, { params: { type, id } }),
    setGatewayNetworks: (gatewayNetworks) => call(operations.agentSetGatewayNetworks, { body: { gatewayNetworks } }),
    reportLabelProblems: (problems) => call(operations.agentReportLabelProblems, { body: { problems } }),
    getServiceAccess: (id) => call(operations.agentGetServiceAccess, { params: { id } }),
    updateServiceAccess: (id, body) => call(operations.agentUpdateServiceAccess, { params: { id }, body }),
    listShareLinks: (id, page, limit) =>
      call(operations.agentListShareLinks, { params: { id }, query: { page, limit } }),
    createShareLink: (id, body) => call(operations.agentCreateShareLink, { params: { id }, body }),
    revokeShareLink: (id, linkId) => call(operations.agentRevokeShareLink, { params: { id, linkId } }),
  };
}

/** Field errors as the user reads them: one `field: message` per line. */
export function formatFieldErrors(errors: readonly { field: string; message: string }[]): string {
  return errors.map((error) => `  ${error.field}: ${error.message}`).join('\n');
}

export function toCliError(error: ApiError, url: string): CliError {
  if (error.status === 422 && error.serverMessage !== null && error.fieldErrors.length > 0) {
    return new FieldsRefusedError(
      `${error.serverMessage}:\n${formatFieldErrors(error.fieldErrors)}`,
      error.fieldErrors,
    );
  }
  const text = error.serverMessage ?? `HTTP ${error.status}`;
  if (error.status === 401) return new TokenRejectedError(text);
  if (error.status === 404 && error.serverMessage === null) {
    return new CliError(`The server at ${url} has no agent API (HTTP 404): is this the gateway's URL?`);
  }
  return new CliError(`The gateway answered: ${text}${error.serverMessage === null ? '' : ` (HTTP ${error.status})`}`);
}

function describeNetworkError(error: unknown): string {
  if (error instanceof RequestTimeoutError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
