import {
  createApiClient,
  fetchTransport,
  operations,
  type AnyService,
  type CallArgs,
  type CallOutput,
  type HttpService,
  type HttpServiceCreate,
  type Node,
  type NodeCreate,
  type NodeCreated,
  type Route,
  type ServiceType,
  type TcpService,
  type TcpServiceCreate,
  type Transport,
} from '@postern/contract';

// The gateway's REST API through the contract's typed client, as the console and CLI use it: the operation table
// gives paths and schemas, so a test fails when the server answers something the contract does not allow.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what} answered ${status}: ${body.slice(0, 500)}`);
  }
}

/** fetch with a deadline; an error answer becomes an ApiError carrying the whole body text. */
function harnessTransport(): Transport {
  const send = fetchTransport();
  return async (request) => {
    const answer = await send({ ...request, signal: request.signal ?? AbortSignal.timeout(30_000) });
    if (answer.status < 200 || answer.status > 299)
      throw new ApiError(answer.status, answer.body, `${request.method} ${request.url}`);
    return answer;
  };
}

const isOfType = (type: ServiceType) => (service: AnyService) => 'pathLocation' in service === (type === 'http');

export class ApiClient {
  private readonly client;

  constructor(
    readonly baseUrl: string,
    readonly token: string | null = null,
  ) {
    this.client = createApiClient({ transport: harnessTransport(), baseUrl, token });
  }

  /** Any operation of the contract (or a bare route) as this client's caller. */
  call<const O extends Route>(operation: O, ...args: CallArgs<O>): Promise<CallOutput<O>> {
    return this.client.call(operation, ...args);
  }

  health() {
    return this.call(operations.health);
  }

  /** A client signed in as `username`. */
  async login(username: string, password: string): Promise<ApiClient> {
    const answer = await this.call(operations.login, { body: { username, password } });
    if (!('token' in answer)) throw new Error(`${username} has two-factor sign-in on: use loginWithCode`);
    return new ApiClient(this.baseUrl, answer.token);
  }

  createNode(body: NodeCreate): Promise<NodeCreated> {
    return this.call(operations.createNode, { body });
  }

  /** The first page of nodes (up to 100). */
  async listNodes(): Promise<Node[]> {
    return (await this.call(operations.listNodes, { query: { limit: 100 } })).data;
  }

  getNode(id: number): Promise<Node> {
    return this.call(operations.getNode, { params: { id } });
  }

  enableNode(id: number): Promise<Node> {
    return this.call(operations.enableNode, { params: { id } });
  }

  disableNode(id: number): Promise<Node> {
    return this.call(operations.disableNode, { params: { id } });
  }

  /** The node's wg-quick config, as the console's download button gets it. */
  async downloadNodeConfig(id: number): Promise<string> {
    return (await this.call(operations.downloadNodeConfig, { params: { id } })).content;
  }

  createHttpService(nodeId: number, body: HttpServiceCreate): Promise<HttpService> {
    return this.call(operations.createHttpService, { params: { nodeId }, body });
  }

  createTcpService(nodeId: number, body: TcpServiceCreate): Promise<TcpService> {
    return this.call(operations.createTcpService, { params: { nodeId }, body });
  }

  enableService(nodeId: number, type: ServiceType, id: number): Promise<AnyService> {
    return this.call(operations.enableService, { params: { nodeId, type, id } });
  }

  disableService(nodeId: number, type: ServiceType, id: number): Promise<AnyService> {
    return this.call(operations.disableService, { params: { nodeId, type, id } });
  }

  /** An edit with any fields (tests send partial and invalid ones too). */
  updateService(nodeId: number, type: ServiceType, id: number, body: Record<string, unknown>): Promise<AnyService> {
    const operation = type === 'http' ? operations.updateHttpService : operations.updateTcpService;
    return this.call(operation, { params: { nodeId, id }, body });
  }

  deleteService(nodeId: number, type: ServiceType, id: number): Promise<undefined> {
    return this.call(operations.deleteService, { params: { nodeId, type, id } });
  }

  /** Every service of one type on a node (the API's largest page). */
  async listNodeServices(nodeId: number, type: 'http'): Promise<HttpService[]>;
  async listNodeServices(nodeId: number, type: 'tcp'): Promise<TcpService[]>;
  async listNodeServices(nodeId: number, type: ServiceType): Promise<AnyService[]> {
    const { data } = await this.call(operations.listNodeServices, { params: { nodeId, type }, query: { limit: 100 } });
    if (!data.every(isOfType(type)))
      throw new Error(`the ${type} list of node ${nodeId} holds services of another type`);
    return data;
  }

  deleteNode(id: number): Promise<undefined> {
    return this.call(operations.deleteNode, { params: { id } });
  }
}
