import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken, logout, readRedirectTarget, readToken, saveRedirectTarget, setSessionNavigator, storeToken } from './session';

describe('session cookie (console-spec §4, §9)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    clearToken();
  });

  it('stores the token in a SameSite=Strict cookie that lives for expires_in seconds', () => {
    const setCookie = vi.spyOn(document, 'cookie', 'set');
    storeToken('abc.def', 3600);
    const written = setCookie.mock.calls[0]?.[0] ?? '';
    expect(written).toMatch(/^token=abc\.def;/);
    expect(written).toContain('Max-Age=3600');
    expect(written).toContain('SameSite=Strict');
    // Tests run a development build: Secure is for production only, so http://localhost keeps working.
    expect(written).not.toContain('Secure');
    setCookie.mockRestore();
    storeToken('abc.def', 3600);
    expect(readToken()).toBe('abc.def');
  });

  it('clears the token', () => {
    storeToken('abc', 60);
    clearToken();
    expect(readToken()).toBeNull();
  });
});

describe('redirect target', () => {
  it("defaults to '/'", () => {
    expect(readRedirectTarget()).toBe('/');
  });

  it('keeps a path, but never the login screen or another origin', () => {
    saveRedirectTarget('/domains');
    expect(readRedirectTarget()).toBe('/domains');
    saveRedirectTarget('/login');
    expect(readRedirectTarget()).toBe('/');
    localStorage.setItem('redirect', '//evil.example/');
    expect(readRedirectTarget()).toBe('/');
  });
});

describe('logout', () => {
  afterEach(() => setSessionNavigator(null));

  it('clears the token, saves the current path and navigates to /login', async () => {
    const navigate = vi.fn(() => Promise.resolve());
    setSessionNavigator(navigate);
    storeToken('abc', 60);
    window.history.replaceState(null, '', '/nodes/3');
    await logout();
    expect(readToken()).toBeNull();
    expect(readRedirectTarget()).toBe('/nodes/3');
    expect(navigate).toHaveBeenCalledWith('/login');
  });

  it('loads /login directly when navigation fails', async () => {
    setSessionNavigator(() => Promise.reject(new Error('router gone')));
    const assign = vi.spyOn(window.location, 'assign').mockImplementation(() => undefined);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await logout();
    expect(assign).toHaveBeenCalledWith('/login');
  });
});
