import {
  HealthSchema, HttpServiceSchema, LoginResponseSchema, NodeCreatedSchema, NodeSchema, TcpServiceSchema, buildPath, routes,
  type HttpService, type HttpServiceCreate, type Node, type NodeCreate, type NodeCreated, type ServiceType, type TcpService, type TcpServiceCreate,
} from '@postern/contract';

// A typed client for the gateway's REST API, as the console and CLI use it: the route table and response
// schemas come from the contract, so a test fails when the server answers something the contract does not allow.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what} answered ${status}: ${body.slice(0, 500)}`);
  }
}

type Route = { method: string; path: string };
/** A contract schema (zod is the contract's dependency, not ours). */
type Parser<T> = { parse(value: unknown): T };

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null = null,
  ) {}

  private async request(route: Route, params: Record<string, string | number>, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.token !== null) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const path = buildPath(route.path, params);
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: route.method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!response.ok) throw new ApiError(response.status, await response.text(), `${route.method} ${path}`);
    return response;
  }

  private async json<T>(schema: Parser<T>, route: Route, params: Record<string, string | number> = {}, body?: unknown): Promise<T> {
    const response = await this.request(route, params, body);
    return schema.parse(await response.json());
  }

  health() {
    return this.json(HealthSchema, routes.health);
  }

  /** A client signed in as `username`. */
  async login(username: string, password: string): Promise<ApiClient> {
    const { token } = await this.json(LoginResponseSchema, routes.login, {}, { username, password });
    return new ApiClient(this.baseUrl, token);
  }

  createNode(body: NodeCreate): Promise<NodeCreated> {
    return this.json(NodeCreatedSchema, routes.createNode, {}, body);
  }

  /** The first page of nodes (up to 100). */
  async listNodes(): Promise<Node[]> {
    const response = await this.request({ ...routes.listNodes, path: `${routes.listNodes.path}?limit=100` }, {});
    return ((await response.json()) as { data: unknown[] }).data.map((row) => NodeSchema.parse(row));
  }

  getNode(id: number): Promise<Node> {
    return this.json(NodeSchema, routes.getNode, { id });
  }

  enableNode(id: number): Promise<unknown> {
    return this.request(routes.enableNode, { id }).then((response) => response.text());
  }

  disableNode(id: number): Promise<unknown> {
    return this.request(routes.disableNode, { id }).then((response) => response.text());
  }

  /** The node's wg-quick config, as the console's download button gets it. */
  async downloadNodeConfig(id: number): Promise<string> {
    return (await this.request(routes.downloadNodeConfig, { id })).text();
  }

  createHttpService(nodeId: number, body: HttpServiceCreate): Promise<HttpService> {
    return this.json(HttpServiceSchema, routes.createHttpService, { nodeId }, body);
  }

  createTcpService(nodeId: number, body: TcpServiceCreate): Promise<TcpService> {
    return this.json(TcpServiceSchema, routes.createTcpService, { nodeId }, body);
  }

  enableService(nodeId: number, type: ServiceType, id: number): Promise<unknown> {
    return this.request(routes.enableService, { nodeId, type, id }).then((response) => response.text());
  }

  disableService(nodeId: number, type: ServiceType, id: number): Promise<unknown> {
    return this.request(routes.disableService, { nodeId, type, id }).then((response) => response.text());
  }

  updateService(nodeId: number, type: ServiceType, id: number, body: Record<string, unknown>): Promise<unknown> {
    return this.request(routes.updateService, { nodeId, type, id }, body).then((response) => response.text());
  }

  deleteService(nodeId: number, type: ServiceType, id: number): Promise<unknown> {
    return this.request(routes.deleteService, { nodeId, type, id }).then((response) => response.text());
  }

  /** Every service of one type on a node (the API's largest page). */
  async listNodeServices(nodeId: number, type: 'http'): Promise<HttpService[]>;
  async listNodeServices(nodeId: number, type: 'tcp'): Promise<TcpService[]>;
  async listNodeServices(nodeId: number, type: ServiceType): Promise<(HttpService | TcpService)[]> {
    const response = await this.request({ ...routes.listNodeServices, path: `${routes.listNodeServices.path}?limit=100` }, { nodeId, type });
    const { data } = (await response.json()) as { data: unknown[] };
    const schema = type === 'http' ? HttpServiceSchema : TcpServiceSchema;
    return data.map((row) => schema.parse(row));
  }

  deleteNode(id: number): Promise<unknown> {
    return this.request(routes.deleteNode, { id }).then((response) => response.text());
  }
}
