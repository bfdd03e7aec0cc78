import type { Role } from '@postern/contract';
import { isRoleRefusal, nodeScopeMessage } from '@postern/contract';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HomeOverview } from '../home/home-overview';
import { DomainsPage } from '../domains/domains-page';
import { NodesPage } from '../nodes/nodes-page';
import { ServicesPage } from '../services-overview/services-page';
import { SettingsPage } from '../settings/settings-page';
import { FakeEventSource } from '../../test/fake-event-source';
import { buildDomain, buildNode } from '../../test/fixtures';
import { Sidebar } from '../../shell/sidebar';
import {
  buildHttpService,
  fakeApi,
  pageAnswer as list,
  renderInRouter,
  type ApiCall,
} from '../services/service-test-fixtures';
// The cards Settings loads lazily, loaded here first: a card that would render must have had the time to ask.
import '../access/identity-providers-card';
import '../certificates/acme-cas-card';
import '../certificates/dns-providers-card';
import '../settings/notifications-card';

// The console follows the account's role and node scope (docs/api.md "Node scope", "Accounts and roles"): what the
// server would refuse is neither offered nor asked for. The fake gateway refuses like the real one, so a request
// that slipped through would show as a call here (and as the policy's toast on screen).

const domain = buildDomain({ domain: 'a.example.com' });

/** Routes a limited account may use (accounts/node-scope.ts `scopeAware`, the self routes, node A's own). */
const scopeAware = [
  /^\/api\/auth\//,
  /^\/api\/nodes(\/stream)?$/,
  /^\/api\/nodes\/4(\/|$)/,
  /^\/api\/domains$/,
  /^\/api\/services(\/(http|tcp|find))?$/,
  /^\/api\/observe\/services$/,
];
/** Routes only owners and admins may change or, for the cards, that the console keeps for them. */
const settingsReads = [/^\/api\/notifications\//, /^\/api\/access\/providers/, /^\/api\/certificates\//];

function gateway(role: Role, nodes: number[] | null): ApiCall[] {
  return fakeApi((method, path) => {
    if (path === '/api/auth/account')
      return { status: 200, body: { id: 5, username: 'olga', role, via: 'password', nodes } };
    if (nodes !== null && !scopeAware.some((allowed) => allowed.test(path)))
      return { status: 403, body: { code: 'forbidden', message: nodeScopeMessage(role) } };
    if (path === '/api/domains') return list([domain]);
    return undefined;
  });
}

/** Whatever the page asked for, nothing was refused (and so no policy toast was shown). */
async function expectNothingRefused(calls: ApiCall[], refused: RegExp[]) {
  // Let the page's queries go out first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const asked = calls.map((call) => call.path).filter((path) => refused.some((pattern) => pattern.test(path)));
  expect(asked).toEqual([]);
  expect(screen.queryAllByText((text) => isRoleRefusal(text))).toEqual([]);
}

const spansNodes = [/^\/api\/system\/(attention|status)/, /^\/api\/observe\/stream/, /^\/api\/audit/];

describe('an operator limited to node 4', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('has a home page of its own, without the gateway-wide figures it may not read', async () => {
    const calls = gateway('operator', [4]);
    renderInRouter(() => <HomeOverview />);
    expect(await screen.findByRole('heading', { name: 'Your nodes' })).toBeTruthy();
    expect(screen.getByText(/limited to one node/)).toBeTruthy();
    await expectNothingRefused(calls, spansNodes);
  });

  it('reads the domains without any change or a domain’s log on offer', async () => {
    const calls = gateway('operator', [4]);
    renderInRouter(() => <DomainsPage />);
    expect(await screen.findByText('a.example.com')).toBeTruthy();
    await waitFor(() => expect(calls.some((call) => call.path === '/api/auth/account')).toBe(true));
    expect(screen.queryByRole('button', { name: /Add Domain/ })).toBeNull();
    // Every item of the row's menu is for accounts that see every node: no menu at all.
    expect(screen.queryByRole('button', { name: 'Actions for a.example.com' })).toBeNull();
    await expectNothingRefused(calls, spansNodes);
  });

  it('sees its services with their figures, and opens no gateway-wide stream nor asks what needs attention', async () => {
    FakeEventSource.opened = [];
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/account')
        return { status: 200, body: { id: 5, username: 'olga', role: 'operator', via: 'password', nodes: [4] } };
      if (path === '/api/services')
        return list([{ type: 'http', node: buildNode({ id: 4 }), certificate: null, service: buildHttpService() }]);
      if (path === '/api/observe/services') return { status: 200, body: { data: [] } };
      if (!scopeAware.some((allowed) => allowed.test(path)))
        return { status: 403, body: { code: 'forbidden', message: nodeScopeMessage('operator') } };
      return undefined;
    });
    renderInRouter(() => <ServicesPage />, { path: '/services' });
    expect(await screen.findByText('api')).toBeTruthy();
    await waitFor(() => expect(calls.some((call) => call.path === '/api/auth/account')).toBe(true));
    await expectNothingRefused(calls, spansNodes);
    expect(FakeEventSource.opened.map((stream) => new URL(stream.url, 'http://localhost').pathname)).not.toContain(
      '/api/observe/stream',
    );
  });

  it('is not offered to add a node', async () => {
    const calls = gateway('operator', [4]);
    renderInRouter(() => <NodesPage />, { path: '/signed-in/nodes' });
    await waitFor(() => expect(calls.some((call) => call.path === '/api/auth/account')).toBe(true));
    await screen.findByRole('heading', { name: 'Client / Nodes' });
    await waitFor(() => expect(screen.queryByRole('button', { name: /Add Client/ })).toBeNull());
  });

  it('has no Certificates or Audit Log in the menu; its nodes, domains, services and Settings stay', async () => {
    const calls = gateway('operator', [4]);
    renderInRouter(() => (
      <Sidebar isExpanded onToggleExpanded={() => undefined} isMobileOpen={false} onCloseMobile={() => undefined} />
    ));
    // Shown until the account is known (hiding is a courtesy that must not flicker for the first admin), then gone.
    expect(await screen.findByRole('link', { name: /Domain Names/ })).toBeTruthy();
    await waitFor(() => expect(calls.some((call) => call.path === '/api/auth/account')).toBe(true));
    await waitFor(() => {
      expect(screen.queryByRole('link', { name: /Audit Log/ })).toBeNull();
      expect(screen.queryByRole('link', { name: /Certificates/ })).toBeNull();
    });
    for (const name of [/Client \/ Nodes/, /Domain Names/, /Services/, /Settings/])
      expect(screen.getByRole('link', { name })).toBeTruthy();
  });
});

describe('Settings', () => {
  afterEach(() => vi.unstubAllGlobals());

  it.each([
    ['viewer', null],
    ['operator', null],
    ['operator', [4]],
  ] as const)('shows a %s (nodes %j) its own sign-in only, and asks for no gateway setting', async (role, nodes) => {
    const calls = gateway(role, nodes === null ? null : [...nodes]);
    renderInRouter(() => <SettingsPage />);
    expect(await screen.findByRole('heading', { name: 'Two-factor sign-in' })).toBeTruthy();
    await waitFor(() => expect(calls.some((call) => call.path === '/api/auth/account')).toBe(true));
    await expectNothingRefused(calls, settingsReads);
    expect(screen.queryByRole('heading', { name: 'Notifications' })).toBeNull();
  });

  it('shows an admin the gateway’s cards, notifications among them', async () => {
    const calls = gateway('admin', null);
    renderInRouter(() => <SettingsPage />);
    expect(await screen.findByRole('heading', { name: 'Notifications' })).toBeTruthy();
    expect(calls.some((call) => call.path.startsWith('/api/notifications/'))).toBe(true);
  });
});

describe('an account that sees every node', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('gets the Audit Log and Certificates in the menu, and Add Domain', async () => {
    gateway('operator', null);
    renderInRouter(() => (
      <Sidebar isExpanded onToggleExpanded={() => undefined} isMobileOpen={false} onCloseMobile={() => undefined} />
    ));
    expect(await screen.findByRole('link', { name: /Audit Log/ })).toBeTruthy();
    expect(screen.getByRole('link', { name: /Certificates/ })).toBeTruthy();
  });

  it('is offered a domain’s changes and its log', async () => {
    gateway('operator', null);
    renderInRouter(() => <DomainsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for a.example.com' }));
    expect(await screen.findByRole('menuitem', { name: 'Logs Monitor' })).toBeTruthy();
    expect(screen.getByRole('menuitem', { name: 'Edit Domain' })).toBeTruthy();
    expect(screen.getAllByRole('button', { name: /Add Domain/ }).length).toBeGreaterThan(0);
  });
});
