import {
  ApiError,
  createApiClient,
  fetchTransport,
  filenameFromDisposition as filenameOf,
  isApiError,
  isRoleRefusal,
  isStoredButNotApplied,
  firstPageRoutes,
  UnexpectedAnswerError,
  type CallArgs,
  type CallOutput,
  type FileDownload,
  type MessageParams,
  type Route,
} from '@postern/contract';
import { reportApiReachable } from './connection-store';
import { hasToken, logout, readToken } from './session';
import { showToast } from './toast-store';

// Every call goes through the contract's typed client (`call(operations.x, { params, query, body })`): credentials
// and the bearer token on every request, JSON in and out, the answer checked against the operation's schema, and the
// error rules of the spec's "Error catalogue" applied here, in one place.

export { ApiError, isApiError };

export const NETWORK_ERROR_MESSAGE = 'Network Error';
export const UNKNOWN_ERROR_MESSAGE = 'Unknown Error';

/** Statuses that end the session when a token exists (the spec's "States and transitions"). */
const SESSION_ENDING_STATUSES = new Set([401, 403, 429]);

const client = createApiClient({ transport: fetchTransport({ credentials: 'include' }), token: readToken });

const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === 'AbortError';

/** Statuses of a gateway that is down or restarting (a proxy in front answers for it). */
const UNREACHABLE_STATUSES = new Set([502, 503, 504]);

/** Sign-in and sign-out say what happened in their own way. */
const QUIET_ROUTES = new Set<string>([firstPageRoutes.login.path, firstPageRoutes.logout.path]);

/**
 * Beyond the spec (which only logs these): what an operator is told when an action got no answer or a server error.
 * The spec's texts ('Network Error', 'Request failed with status code N') come first.
 */
export function failureToastMessage(error: unknown): string | null {
  if (!isApiError(error)) return null;
  if (error.status === 0)
    return `${NETWORK_ERROR_MESSAGE}: the gateway could not be reached. Check your connection and try again.`;
  if (error.status >= 500)
    return `${error.serverMessage ?? `Request failed with status code ${error.status}`}. Try again in a moment.`;
  return null;
}

/**
 * Tells the operator that an action failed for want of an answer or on a server error (other failures have their own
 * path).
 */
export function toastActionFailure(error: unknown): void {
  const message = failureToastMessage(error);
  if (message) showToast({ message, type: 'error' });
}

type MessageTranslator = (message: string, code: string | null, params: MessageParams | null) => string;

// The translator is handed in by main.tsx (i18n.ts `translatedMessage`): imported here, it split the entry chunk
// (+0.5 KiB on the first page). Until then, and in tests that do not set it, messages show as the server sent them.
let translateMessage: MessageTranslator = (message) => message;

/** Sets how a server's message is said in the operator's language (its message code and values). */
export function setMessageTranslator(translator: MessageTranslator): void {
  translateMessage = translator;
}

/** The server's message in the operator's language (its message code), else the English text, else 'Unknown Error'. */
export function serverMessageText(error: ApiError): string {
  return error.serverMessage === null
    ? UNKNOWN_ERROR_MESSAGE
    : translateMessage(error.serverMessage, error.messageCode, error.params);
}

/** Applies the spec's "Error catalogue" to a failure and returns the error to throw. */
async function handleFailure(error: unknown, route: Route, isAction: boolean): Promise<unknown> {
  // An abort is the caller's own doing: pass it on unchanged.
  if (isAbort(error)) return error;
  if (!(error instanceof ApiError)) {
    // An answer that is not what the contract says is a bug to see, not a network failure.
    if (error instanceof UnexpectedAnswerError) return error;
    reportApiReachable(false);
    const failure = new ApiError(0, NETWORK_ERROR_MESSAGE);
    if (isAction && !QUIET_ROUTES.has(route.path)) toastActionFailure(failure);
    return failure;
  }
  // A data plane that is down answers 503 from a control plane that is up: the change is stored (warning below).
  const isStoredChange = isStoredButNotApplied(error.code);
  reportApiReachable(isStoredChange || !UNREACHABLE_STATUSES.has(error.status));
  if (error.status >= 500 && !isStoredChange && isAction && !QUIET_ROUTES.has(route.path)) toastActionFailure(error);
  if (error.status === 400) showToast({ message: serverMessageText(error), type: 'error' });
  // Beyond the spec: the change is saved and applied once the gateway is back; say so instead of only logging it.
  if (error.code === 'dataplane_unavailable') showToast({ message: serverMessageText(error), type: 'warning' });
  // Beyond the spec: a 403 of the role policy (docs/api.md "Accounts and roles") refuses one call to an account that
  // stays signed in; its message says who may. The screens hide what a role may not do, so this is rare.
  if (error.status === 403 && isRoleRefusal(error.serverMessage)) {
    showToast({ message: error.serverMessage ?? UNKNOWN_ERROR_MESSAGE, type: 'error' });
    return error;
  }
  if (SESSION_ENDING_STATUSES.has(error.status) && hasToken()) await logout();
  return error;
}

/**
 * The server stored the change, but the data plane did not serve it (`dataplane_rejected`: the row is set aside with
 * its applyError; `dataplane_unavailable`: applied once the gateway is back). The operator has been told why; what is
 * shown must still be refreshed, and a form must not offer to send the change again.
 */
export function isStoredButNotAppliedError(error: unknown): error is ApiError {
  return isApiError(error) && isStoredButNotApplied(error.code);
}

export type SettledChange<T> = { isApplied: true; value: T } | { isApplied: false };

/** Awaits a change; one stored but not applied counts as done (`isApplied: false`). Other failures reject. */
export async function settleStoredChange<T>(change: Promise<T>): Promise<SettledChange<T>> {
  try {
    return { isApplied: true, value: await change };
  } catch (error) {
    if (isStoredButNotAppliedError(error)) return { isApplied: false };
    throw error;
  }
}

/** Calls an operation of the contract (or a bare route: the answer is then unchecked `unknown`). */
export async function call<const O extends Route>(operation: O, ...args: CallArgs<O>): Promise<CallOutput<O>> {
  try {
    const answer = await client.call(operation, ...args);
    reportApiReachable(true);
    return answer;
  } catch (error) {
    // A change (any method but GET) is an action the operator took; reads fail on screen in their own way.
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- an abort is passed on exactly as fetch threw it
    throw await handleFailure(error, operation, operation.method !== 'GET');
  }
}

export type Download = { blob: Blob; filename: string };

/** The file name from Content-Disposition, or the fallback (the spec's "The calls it makes": default config.conf). */
export function filenameFromDisposition(header: string | null, fallback: string): string {
  return filenameOf(header) ?? fallback;
}

export function toDownload(file: FileDownload, fallbackName: string): Download {
  return {
    blob: new Blob([file.content], { type: file.mediaType ?? 'application/octet-stream' }),
    filename: file.filename ?? fallbackName,
  };
}

/** Hands a downloaded file to the browser's save flow. */
export function saveFile({ blob, filename }: Download): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoke later: some browsers read the URL asynchronously after click().
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
