import type { RouterHistory } from '@tanstack/react-router';
import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
} from '@tanstack/react-router';
import {
  validateDomainsSearch,
  validateNodeDetailSearch,
  validateNodesSearch,
  validateServicesSearch,
} from './lib/list-search';
import { withMoreTexts, withTexts } from './i18n/i18n';
import { restoreSession, saveRedirectTarget, setSessionNavigator } from './lib/session';
import { NotFoundPage } from './pages/not-found-page';
import { AppShell } from './shell/app-shell';

// Code-based route tree (the spec's "Screens and routes"). Every page is a lazy chunk, so the first load carries only
// the shell.

const rootRoute = createRootRoute({ component: Outlet, notFoundComponent: NotFoundPage });

const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/login',
  beforeLoad: async () => {
    if (await restoreSession()) throw redirect({ to: '/' });
  },
  component: lazyRouteComponent(() => withTexts('signin', import('./pages/login-page')), 'LoginPage'),
});

/** Where an identity provider sends the browser back after a sign-in started on the login page. */
const loginCallbackRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/login/callback',
  component: lazyRouteComponent(() => withTexts('signin', import('./pages/login-callback-page')), 'LoginCallbackPage'),
});

/**
 * Everything but login needs a session; the path asked for is kept so sign-in can return to it. After a page load
 * the session is only in the server's HttpOnly cookie: restoreSession asks for it once.
 */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'signed-in',
  beforeLoad: async ({ location }) => {
    if (!(await restoreSession())) {
      saveRedirectTarget(location.href);
      throw redirect({ to: '/login' });
    }
  },
  component: AppShell,
});

const homeRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./pages/home-page'), 'HomePage'),
});

const domainsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/domains',
  validateSearch: validateDomainsSearch,
  component: lazyRouteComponent(() => withMoreTexts(import('./features/domains/domains-page')), 'DomainsPage'),
});

const domainLogsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/domains/$domain/logs',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/logs/log-viewer-page')), 'DomainLogsPage'),
});

const nodesRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/nodes',
  validateSearch: validateNodesSearch,
  component: lazyRouteComponent(() => withMoreTexts(import('./features/nodes/nodes-page')), 'NodesPage'),
});

const nodeRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/nodes/$id',
  validateSearch: validateNodeDetailSearch,
  component: lazyRouteComponent(() => withMoreTexts(import('./features/nodes/node-detail-page')), 'NodeDetailPage'),
});

const serviceLogsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/nodes/$nodeId/$type/$id/logs',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/logs/log-viewer-page')), 'ServiceLogsPage'),
});

/** Beyond the spec: every published service across nodes. */
const servicesRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/services',
  validateSearch: validateServicesSearch,
  component: lazyRouteComponent(
    () => withMoreTexts(import('./features/services-overview/services-page')),
    'ServicesPage',
  ),
});

const auditRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/audit',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/audit/audit-page')), 'AuditPage'),
});

/** Beyond the spec: the admin's own settings (password, two-factor sign-in). */
const settingsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/settings',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/settings/settings-page')), 'SettingsPage'),
});

/** Beyond the spec: every domain's certificate (docs/api.md "Certificates"). */
const certificatesRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/certificates',
  component: lazyRouteComponent(
    () => withMoreTexts(import('./features/certificates/certificates-page')),
    'CertificatesPage',
  ),
});

/** Beyond the spec: the owners' accounts and invites (docs/api.md "Accounts and roles"). */
const accountsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/accounts',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/accounts/accounts-page')), 'AccountsPage'),
});

/** An invite link's page (`/invite#<token>`): the invitee sets a password; no session needed. */
const inviteRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/invite',
  component: lazyRouteComponent(() => withMoreTexts(import('./features/accounts/invite-page')), 'InvitePage'),
});

/** Unknown paths inside the app: shown in the shell, behind the same guard. */
const notFoundRoute = createRoute({ getParentRoute: () => signedInRoute, path: '$', component: NotFoundPage });

const routeTree = rootRoute.addChildren([
  loginRoute,
  loginCallbackRoute,
  inviteRoute,
  signedInRoute.addChildren([
    homeRoute,
    domainsRoute,
    domainLogsRoute,
    nodesRoute,
    nodeRoute,
    serviceLogsRoute,
    servicesRoute,
    auditRoute,
    certificatesRoute,
    accountsRoute,
    settingsRoute,
    notFoundRoute,
  ]),
]);

/** A history can be injected so tests run the guards against a memory history. */
export function createAppRouter(history?: RouterHistory) {
  return createRouter({
    routeTree,
    ...(history ? { history } : {}),
    defaultPreload: 'intent',
    scrollRestoration: true,
  });
}

export const router = createAppRouter();

setSessionNavigator((to) => router.navigate({ to }));

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
