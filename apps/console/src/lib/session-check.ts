import { firstPageRoutes } from '@postern/contract';
import { call } from './api';
import { hasToken, logout } from './session';

// EventSource hides the status of a refused stream: a 401 looks like any dropped connection. This asks the question
// again as a normal API call, so a refused session takes the client's own path (sign out on 401, 403 or 429 while
// a token exists) instead of a stream path of its own.

/**
 * The question is whether the bearer token this page holds still works, so the probe is a bearer call (GET
 * /api/auth/session answers for the cookie instead); one node of the list is the cheapest one.
 */
const PROBE_QUERY = { page: 1, limit: 1 };

/**
 * Resolves true while the session holds. A failure that says nothing about the session (no response, 5xx) also
 * resolves true: the caller reconnects and asks again on the next error.
 */
export async function checkSession(signal: AbortSignal): Promise<boolean> {
  if (!hasToken()) {
    // The token ran out together with the session: go to login as the route guard would on the next navigation.
    await logout();
    return false;
  }
  try {
    await call(firstPageRoutes.listNodes, { query: PROBE_QUERY, signal });
  } catch {
    // The client has already signed out where the spec's "States and transitions" say so; whether a token is left is
    // the answer.
  }
  return hasToken();
}
