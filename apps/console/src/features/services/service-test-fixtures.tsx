import type { HttpService, TcpService } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  Outlet,
  RouterProvider,
} from '@tanstack/react-router';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { vi } from 'vitest';
import { ConfirmProvider } from '../../components/ui/confirm';
import { Toaster } from '../../components/ui/toast';
import { FakeEventSource } from '../../test/fake-event-source';

// Test data and a fake API for the service and domain component tests.

export const buildHttpService = (overrides: Partial<HttpService> = {}): HttpService => ({
  id: 9,
  nodeId: 4,
  name: 'api',
  domain: 'app.example.com',
  pathLocation: '/',
  backendProto: 'http',
  backendHost: '10.0.0.4',
  backendPort: 8080,
  allowedIps: [],
  blockedIps: [],
  enabled: true,
  publicAccess: 'https://app.example.com/',
  applyError: null,
  ssl: 'certbot',
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
  ...overrides,
});

export const buildTcpService = (overrides: Partial<TcpService> = {}): TcpService => ({
  id: 11,
  nodeId: 4,
  name: 'mqtt',
  domain: null,
  proto: 'tcp',
  port: 30001,
  ssl: false,
  backendHost: '10.0.0.4',
  backendPort: 1883,
  allowedIps: [],
  blockedIps: [],
  enabled: true,
  publicAccess: 'tcp://gw.example.com:30001',
  applyError: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
  ...overrides,
});

type Reply = { status: number; body?: unknown };

/** A 200 answer with one page (of 10) holding `data`, as the list routes give it. */
export const pageAnswer = (data: unknown[]): Reply => ({
  status: 200,
  body: { data, page: 1, limit: 10, total: data.length },
});
export type ApiCall = { method: string; path: string; query: URLSearchParams; body: unknown };

/**
 * Replaces fetch: `reply(method, path)` decides each answer; every call is recorded with its parsed body.
 * Unlisted calls answer an empty list, which is what the forms' domain suggestions ask for.
 */
const signedInOwner = { id: 1, username: 'admin', role: 'owner', via: 'password', nodes: null };

export function fakeApi(
  reply: (method: string, path: string, query: URLSearchParams) => Reply | undefined = () => undefined,
): ApiCall[] {
  const calls: ApiCall[] = [];
  // Service rows open the gateway's observe stream (health changes), which jsdom has no EventSource for.
  vi.stubGlobal('EventSource', FakeEventSource);
  vi.stubGlobal(
    'fetch',
    vi.fn((input: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET';
      const url = new URL(input, 'http://localhost');
      const path = url.pathname;
      calls.push({
        method,
        path,
        query: url.searchParams,
        body: typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
      });
      // Unless the test says who is signed in: the first owner, who sees every node.
      const answer = reply(method, path, url.searchParams) ??
        (path === '/api/auth/account' ? { status: 200, body: signedInOwner } : undefined) ?? {
          status: 200,
          body: { data: [], page: 1, limit: 10, total: 0 },
        };
      return Promise.resolve(
        new Response(answer.body === undefined ? null : JSON.stringify(answer.body), { status: answer.status }),
      );
    }),
  );
  return calls;
}

export function renderWithProviders(ui: ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <ConfirmProvider>{ui}</ConfirmProvider>
    </QueryClientProvider>,
  );
}

/**
 * Renders `ui` on route `path` (opened at `url`) inside a memory router, with toasts and confirmations, for
 * components that link, navigate or read route params. Other paths render a marker.
 */
export function renderInRouter(ui: () => ReactNode, { path = '/', url = path }: { path?: string; url?: string } = {}) {
  const rootRoute = createRootRoute({ component: Outlet });
  const homeRoute = createRoute({ getParentRoute: () => rootRoute, path, component: ui });
  const elsewhereRoute = createRoute({ getParentRoute: () => rootRoute, path: '$', component: () => <p>elsewhere</p> });
  const router = createRouter({
    routeTree: rootRoute.addChildren([homeRoute, elsewhereRoute]),
    history: createMemoryHistory({ initialEntries: [url] }),
  });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <ConfirmProvider>
        <RouterProvider router={router} />
        <Toaster />
      </ConfirmProvider>
    </QueryClientProvider>,
  );
  return router;
}
