import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../features/services/service-test-fixtures';
import { clearToken, readToken } from '../lib/session';
import { LoginCallbackPage } from './login-callback-page';
import { LoginPage } from './login-page';

describe("signing in with the organisation's identity provider", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    clearToken();
  });

  it('offers no provider button when none signs accounts in (the spec’s login page)', async () => {
    const calls = fakeApi((_, path) =>
      path === '/api/auth/providers' ? { status: 200, body: { data: [] } } : undefined,
    );
    renderInRouter(() => <LoginPage />, { path: '/login' });
    await screen.findByRole('button', { name: 'Sign in' });
    await waitFor(() => expect(calls.some((c) => c.path === '/api/auth/providers')).toBe(true));
    expect(screen.getAllByRole('button').map((b) => b.textContent)).toEqual(['Sign in']);
  });

  it('starts at the provider the button names and goes to the URL the server gives', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { href: window.location.href, search: '', hash: '', pathname: '/login', assign });
    const calls = fakeApi((method, path) => {
      if (path === '/api/auth/providers') return { status: 200, body: { data: [{ id: 3, name: 'Corp IdP' }] } };
      if (method === 'POST' && path === '/api/auth/sso/start')
        return { status: 200, body: { url: 'https://idp.test/authorize?state=s' } };
      return undefined;
    });
    renderInRouter(() => <LoginPage />, { path: '/login' });
    fireEvent.click(await screen.findByRole('button', { name: 'Sign in with Corp IdP' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('https://idp.test/authorize?state=s'));
    expect(calls.find((c) => c.path === '/api/auth/sso/start')?.body).toEqual({ providerId: 3 });
  });

  it('hands the callback’s query to the server once and lands signed in', async () => {
    const calls = fakeApi((_, path) =>
      path === '/api/auth/sso/finish' ? { status: 200, body: { token: 'sso-session', expires_in: 3600 } } : undefined,
    );
    const router = renderInRouter(() => <LoginCallbackPage />, {
      path: '/login/callback',
      url: '/login/callback?code=c&state=s',
    });
    await waitFor(() => expect(readToken()).toBe('sso-session'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(calls.filter((c) => c.path === '/api/auth/sso/finish')).toHaveLength(1);
  });

  it('shows the server’s refusal with a way back', async () => {
    fakeApi((_, path) =>
      path === '/api/auth/sso/finish'
        ? { status: 403, body: { code: 'forbidden', message: 'No console account is bound to this identity' } }
        : undefined,
    );
    renderInRouter(() => <LoginCallbackPage />, { path: '/login/callback', url: '/login/callback?code=c&state=s' });
    expect(await screen.findByText('No console account is bound to this identity')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Back to sign-in' })).toBeTruthy();
  });
});
