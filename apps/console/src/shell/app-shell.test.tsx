import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createMemoryHistory, RouterProvider } from '@tanstack/react-router';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { rolePermissions } from '@postern/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfirmProvider } from '../components/ui/confirm';
import { clearToken, storeToken } from '../lib/session';
import { NOT_FOUND_TEXT } from '../pages/not-found-page';
import { createAppRouter } from '../router';

async function renderApp(path: string) {
  const router = createAppRouter(createMemoryHistory({ initialEntries: [path] }));
  await act(async () => {
    render(
      <QueryClientProvider client={new QueryClient()}>
        <ConfirmProvider>
          <RouterProvider router={router} />
        </ConfirmProvider>
      </QueryClientProvider>,
    );
    await router.load();
  });
  return router;
}

const sidebar = () => screen.getByRole('complementary', { name: 'Sidebar' });

describe('shell', () => {
  beforeEach(() => {
    storeToken('abc', 60);
    vi.stubGlobal('matchMedia', () => ({
      matches: false,
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
    }));
  });
  afterEach(() => {
    clearToken();
    vi.unstubAllGlobals();
  });

  it("shows the 'Pages' group, collapsed by default, and remembers expanding it", async () => {
    await renderApp('/no-such-page');
    expect(screen.getByText('Pages')).toBeTruthy();
    for (const name of ['Home', 'Domain Names', 'Client / Nodes'])
      expect(screen.getByRole('link', { name })).toBeTruthy();
    expect(sidebar().dataset.expanded).toBe('false');
    fireEvent.click(screen.getByRole('button', { name: 'Expand sidebar' }));
    expect(sidebar().dataset.expanded).toBe('true');
    expect(localStorage.getItem('sidebar-expanded')).toBe('true');
  });

  it('closes the mobile sidebar on Escape and on a click outside', async () => {
    await renderApp('/no-such-page');
    fireEvent.click(screen.getByRole('button', { name: 'Open sidebar' }));
    expect(sidebar().dataset.mobileOpen).toBe('true');
    fireEvent.keyDown(document, { key: 'Escape', keyCode: 27 });
    expect(sidebar().dataset.mobileOpen).toBe('false');
    fireEvent.click(screen.getByRole('button', { name: 'Open sidebar' }));
    fireEvent.mouseDown(screen.getByRole('main'));
    expect(sidebar().dataset.mobileOpen).toBe('false');
  });

  it('shows the not-found text with a way home', async () => {
    await renderApp('/no-such-page');
    expect(screen.getByText(NOT_FOUND_TEXT)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Back To Home' }).getAttribute('href')).toBe('/');
  });

  it('cycles the theme light → dark → auto and keeps it', async () => {
    localStorage.setItem('theme', 'light');
    await renderApp('/no-such-page');
    fireEvent.click(screen.getByRole('button', { name: /^Theme: light/ }));
    expect(localStorage.getItem('theme')).toBe('dark');
    expect(document.documentElement.classList.contains('dark')).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: /^Theme: dark/ }));
    expect(localStorage.getItem('theme')).toBe('auto');
    expect(document.documentElement.classList.contains('dark')).toBe(false);
  });

  it.each([
    ['owner', true],
    ['viewer', false],
  ] as const)(
    'names the %s signed in, with its role; only an owner has the Accounts page in the menu',
    async (role, hasAccounts) => {
      vi.stubGlobal(
        'fetch',
        vi.fn((input: string) =>
          Promise.resolve(
            new URL(input, 'http://localhost').pathname === '/api/auth/account'
              ? Response.json({
                  id: 2,
                  username: 'alice@corp.test',
                  role,
                  passwordSignIn: true,
                  twoFactor: false,
                  identity: null,
                  via: 'password',
                  permissions: [...rolePermissions[role]],
                })
              : new Response(null, { status: 404 }),
          ),
        ),
      );
      await renderApp('/no-such-page');
      const label = role === 'owner' ? 'Owner' : 'Viewer';
      expect(
        (await screen.findAllByText((_, node) => node?.textContent === `Signed in as alice@corp.test (${label})`))
          .length,
      ).toBeGreaterThan(0);
      expect(screen.queryByRole('link', { name: 'Accounts' }) !== null).toBe(hasAccounts);
    },
  );
});
