// The route table (console-spec §7) plus the calls the spec leaves implicit (docs/api.md). Paths use
// `:param` placeholders; `buildPath` fills them with URL-encoded values.

export const routes = {
  health: { method: 'GET', path: '/api/health' },
  openapi: { method: 'GET', path: '/api/openapi.json' },
  /** The gateway's public facts the console prints in the connect command (admin session). */
  systemInfo: { method: 'GET', path: '/api/system/info' },

  login: { method: 'POST', path: '/api/auth/login' },
  logout: { method: 'POST', path: '/api/auth/logout' },
  changePassword: { method: 'PATCH', path: '/api/auth/password' },
  /** The console's way back to its session after a page load: authenticated by the HttpOnly cookie only. */
  session: { method: 'GET', path: '/api/auth/session' },

  listNodes: { method: 'GET', path: '/api/nodes' },
  createNode: { method: 'POST', path: '/api/nodes' },
  nodeStream: { method: 'GET', path: '/api/nodes/stream' },
  getNode: { method: 'GET', path: '/api/nodes/:id' },
  updateNode: { method: 'PATCH', path: '/api/nodes/:id' },
  deleteNode: { method: 'DELETE', path: '/api/nodes/:id' },
  downloadNodeConfig: { method: 'GET', path: '/api/nodes/:id/download' },
  enableNode: { method: 'PATCH', path: '/api/nodes/:id/enable' },
  disableNode: { method: 'PATCH', path: '/api/nodes/:id/disable' },

  listTokens: { method: 'GET', path: '/api/nodes/:id/pats' },
  createToken: { method: 'POST', path: '/api/nodes/:id/pats' },
  revokeToken: { method: 'PATCH', path: '/api/nodes/:id/pats/:tokenId/revoke' },
  deleteToken: { method: 'DELETE', path: '/api/nodes/:id/pats/:tokenId' },

  listDomains: { method: 'GET', path: '/api/domains' },
  createDomain: { method: 'POST', path: '/api/domains' },
  getDomain: { method: 'GET', path: '/api/domains/:id' },
  updateDomain: { method: 'PATCH', path: '/api/domains/:id' },
  deleteDomain: { method: 'DELETE', path: '/api/domains/:id' },

  listHttpServices: { method: 'GET', path: '/api/services/http' },
  listTcpServices: { method: 'GET', path: '/api/services/tcp' },
  listNodeServices: { method: 'GET', path: '/api/services/:nodeId/:type' },
  createHttpService: { method: 'POST', path: '/api/services/:nodeId/http' },
  createTcpService: { method: 'POST', path: '/api/services/:nodeId/tcp' },
  getService: { method: 'GET', path: '/api/services/:nodeId/:type/:id' },
  updateService: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id' },
  enableService: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id/enable' },
  disableService: { method: 'PATCH', path: '/api/services/:nodeId/:type/:id/disable' },
  deleteService: { method: 'DELETE', path: '/api/services/:nodeId/:type/:id' },

  logStream: { method: 'GET', path: '/api/logs/stream' },

  // Agent API for the `postern` CLI: authenticated by the node's personal access token, scoped to that node.
  agentNode: { method: 'GET', path: '/api/agent/node' },
  agentConfig: { method: 'GET', path: '/api/agent/config' },
  agentListServices: { method: 'GET', path: '/api/agent/services/:type' },
  agentCreateHttpService: { method: 'POST', path: '/api/agent/services/http' },
  agentCreateTcpService: { method: 'POST', path: '/api/agent/services/tcp' },
  agentEnableService: { method: 'PATCH', path: '/api/agent/services/:type/:id/enable' },
  agentDisableService: { method: 'PATCH', path: '/api/agent/services/:type/:id/disable' },
  agentDeleteService: { method: 'DELETE', path: '/api/agent/services/:type/:id' },
} as const satisfies Record<string, { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string }>;

export type RouteName = keyof typeof routes;

export function buildPath(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/:([A-Za-z]+)/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`missing path parameter ${key} for ${path}`);
    return encodeURIComponent(String(value));
  });
}
