import { forbiddenMessage, routes } from '@postern/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { activateLanguage, loadMoreTexts, translatedMessage } from '../i18n/i18n';
import {
  ApiError,
  call,
  filenameFromDisposition,
  isStoredButNotAppliedError,
  setMessageTranslator,
  settleStoredChange,
} from './api';
import { clearToken, readToken, setSessionNavigator, storeToken } from './session';
import { dismissToast, getToasts } from './toast-store';

function respondWith(status: number, body?: unknown) {
  const fetchMock = vi.fn(() =>
    Promise.resolve(
      new Response(body === undefined ? null : JSON.stringify(body), {
        status,
        headers: { 'Content-Type': 'application/json' },
      }),
    ),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

async function failureOf(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

const toastMessages = () => getToasts().map((toast) => `${toast.type}: ${toast.message}`);

describe('api error rules (console spec: Error catalogue)', () => {
  const navigate = vi.fn(() => Promise.resolve());

  beforeEach(() => {
    setSessionNavigator(navigate);
    window.history.replaceState(null, '', '/nodes/7?tab=tokens');
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    navigate.mockClear();
    clearToken();
    for (const toast of getToasts()) dismissToast(toast.id);
  });

  it('sends the bearer token the page holds, with credentials', async () => {
    storeToken('secret-token', 3600);
    const fetchMock = respondWith(200, { ok: true });
    await call(routes.listNodes);
    const [, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(init.credentials).toBe('include');
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer secret-token');
  });

  it("shows a 400's message as an error toast", async () => {
    respondWith(400, { message: 'The local node has no config to download' });
    const error = await failureOf(call(routes.downloadNodeConfig, { params: { id: 1 } }));
    expect(error.status).toBe(400);
    expect(toastMessages()).toEqual(['error: The local node has no config to download']);
  });

  it("says a toast's server message in the operator's language by its code; an unknown code in English", async () => {
    setMessageTranslator(translatedMessage);
    await activateLanguage('de');
    await loadMoreTexts();
    try {
      respondWith(400, {
        message: 'The local node has no config to download',
        code: 'bad_request',
        messageCode: 'local_node_no_config',
      });
      await failureOf(call(routes.downloadNodeConfig, { params: { id: 1 } }));
      respondWith(503, {
        message: 'Saved, but the gateway could not apply it yet: nginx is down',
        code: 'dataplane_unavailable',
        messageCode: 'saved_not_applied',
        params: { reason: 'nginx is down' },
      });
      await failureOf(call(routes.createNode, { body: { name: 'n' } }));
      respondWith(400, { message: 'A message of a newer gateway', code: 'bad_request', messageCode: 'made_up_code' });
      await failureOf(call(routes.createNode, { body: { name: 'n' } }));
      expect(toastMessages()).toEqual([
        'error: Für den lokalen Knoten gibt es keine Konfiguration zum Herunterladen',
        'warning: Gespeichert, aber das Gateway konnte es noch nicht anwenden: nginx is down',
        'error: A message of a newer gateway',
      ]);
    } finally {
      setMessageTranslator((message) => message);
      await activateLanguage('en');
    }
  });

  it("shows 'Unknown Error' for a 400 without a message", async () => {
    respondWith(400);
    await failureOf(call(routes.listNodes));
    expect(toastMessages()).toEqual(['error: Unknown Error']);
  });

  it.each([401, 403, 429])('logs out on %i while signed in and remembers where the user was', async (status) => {
    storeToken('secret-token', 3600);
    respondWith(status, { message: 'no' });
    await failureOf(call(routes.listNodes));
    expect(readToken()).toBeNull();
    expect(localStorage.getItem('redirect')).toBe('/nodes/7?tab=tokens');
    expect(navigate).toHaveBeenCalledWith('/login');
  });

  it("keeps the session on the role policy's 403 and shows its message", async () => {
    storeToken('secret-token', 3600);
    const message = forbiddenMessage('viewer', 'operate');
    respondWith(403, { code: 'forbidden', message });
    const error = await failureOf(call(routes.deleteNode, { params: { id: 4 } }));
    expect(error.status).toBe(403);
    expect(readToken()).toBe('secret-token');
    expect(navigate).not.toHaveBeenCalled();
    expect(toastMessages()).toEqual([`error: ${message}`]);
  });

  it('does not log out on 401 without a token (a failed sign-in)', async () => {
    respondWith(401, { message: 'Invalid credentials' });
    const error = await failureOf(call(routes.login, { body: {} }));
    expect(error.message).toBe('Request failed with status code 401');
    expect(navigate).not.toHaveBeenCalled();
  });

  it("gives 'Network Error' when no response arrives", async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const error = await failureOf(call(routes.listNodes));
    expect([error.status, error.message]).toEqual([0, 'Network Error']);
  });

  it("names the status of other failures and keeps the server's message apart", async () => {
    respondWith(409, { message: 'Port 8080 is taken' });
    const error = await failureOf(call(routes.createTcpService, { params: { nodeId: 1 }, body: {} }));
    expect(error.message).toBe('Request failed with status code 409');
    expect(error.serverMessage).toBe('Port 8080 is taken');
    expect(getToasts()).toHaveLength(0);
  });

  it("tells the operator a change was saved but not applied yet (code dataplane_unavailable), beyond the spec's 400 rule", async () => {
    respondWith(503, {
      message: 'Saved, but the gateway could not apply it yet: nginx is down',
      code: 'dataplane_unavailable',
    });
    const error = await failureOf(call(routes.createNode, { body: { name: 'n' } }));
    expect([error.status, error.code]).toEqual([503, 'dataplane_unavailable']);
    expect(toastMessages()).toEqual(['warning: Saved, but the gateway could not apply it yet: nginx is down']);
    respondWith(503, { message: 'Service Unavailable' });
    await failureOf(call(routes.listNodes));
    expect(toastMessages()).toHaveLength(1);
  });

  it('counts a change stored but not applied as done, and nothing else', async () => {
    respondWith(400, { message: 'nginx refused it', code: 'dataplane_rejected' });
    expect(isStoredButNotAppliedError(await failureOf(call(routes.createNode, { body: {} })))).toBe(true);
    await expect(settleStoredChange(call(routes.createNode, { body: {} }))).resolves.toEqual({ isApplied: false });
    respondWith(400, { message: 'quota', code: 'bad_request' });
    await expect(settleStoredChange(call(routes.createNode, { body: {} }))).rejects.toBeInstanceOf(ApiError);
  });

  it('carries the field messages of a 422', async () => {
    respondWith(422, {
      message: 'Validation failed',
      errors: { body: [{ field: 'name', message: 'This field is required' }] },
    });
    const error = await failureOf(call(routes.createNode, { body: {} }));
    expect(error.fieldErrors).toEqual([{ field: 'name', message: 'This field is required' }]);
  });
});

describe('filenameFromDisposition', () => {
  it('reads the quoted file name and falls back to config.conf', () => {
    expect(filenameFromDisposition('attachment; filename="postern-laptop.conf"', 'config.conf')).toBe(
      'postern-laptop.conf',
    );
    expect(filenameFromDisposition(null, 'config.conf')).toBe('config.conf');
    expect(filenameFromDisposition('attachment', 'config.conf')).toBe('config.conf');
  });
});
