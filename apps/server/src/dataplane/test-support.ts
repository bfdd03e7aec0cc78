import type { NginxRenderOptions } from './nginx/options.js';
import type { DesiredHttpRoute, DesiredState } from './types.js';

// What the reconciler's and supervisor's tests plan against (the adapters: offline.ts `createRecordingReconciler`).

export const TEST_RENDER_OPTIONS: NginxRenderOptions = {
  prefixDir: '/data/nginx',
  certsDir: '/data/certs',
  httpPort: 80,
  httpsPort: 443,
  noDomainHttpsPort: 8443,
  consoleHost: 'gw.test',
  consoleUpstream: 'http://127.0.0.1:3000',
  tunnelAddress: '10.44.0.1',
  resolvers: ['10.0.0.53'],
};

/** The gateway alone: no nodes, services or domains. */
export const EMPTY_STATE: DesiredState = {
  gateway: { address: '10.44.0.1/16', listenPort: 51820, privateKey: `${'A'.repeat(43)}=`, publicHost: 'gw.test' },
  peers: [],
  http: [],
  stream: [],
  domains: [],
};

/** An HTTP service of node 2 on a.test, to 10.44.0.2:80, open to everyone; `over` changes what a test is about. */
export const httpRoute = (over: Partial<DesiredHttpRoute> = {}): DesiredHttpRoute => ({
  serviceId: 1,
  nodeId: 2,
  domain: 'a.test',
  pathLocation: '/',
  backendProto: 'http',
  backendHost: '10.44.0.2',
  backendPort: 80,
  allowedIps: [],
  blockedIps: [],
  ...over,
});
