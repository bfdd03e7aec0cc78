import type { FieldError } from '@postern/contract';
import type { z } from 'zod';
import { hasToken, logout, readToken } from './session';
import { showToast } from './toast-store';

// One fetch wrapper for every call (console-spec §6, §8): credentials and the bearer token on every request,
// JSON in and out, and the error rules applied in one place.

export const NETWORK_ERROR_MESSAGE = 'Network Error';
export const UNKNOWN_ERROR_MESSAGE = 'Unknown Error';

export class ApiError extends Error {
  constructor(
    /** 0 when no response arrived. */
    readonly status: number,
    message: string,
    /** The server's `message`, if it sent one. */
    readonly serverMessage: string | null = null,
    /** 422: per-field messages from `errors.body`. */
    readonly fieldErrors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Statuses that end the session when a token exists (console-spec §4). */
const SESSION_ENDING_STATUSES = new Set([401, 403, 429]);

export type QueryValue = string | number | boolean | null | undefined;

export type RequestOptions = {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
};

export function withQuery(path: string, query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function isFieldError(value: unknown): value is FieldError {
  return typeof value === 'object' && value !== null && 'field' in value && 'message' in value &&
    typeof value.field === 'string' && typeof value.message === 'string';
}

/** `errors.body` of a 422, checked by hand: zod stays out of the first page's bundle. */
function fieldErrorsOf(body: unknown): FieldError[] {
  if (typeof body !== 'object' || body === null || !('errors' in body)) return [];
  const { errors } = body;
  if (typeof errors !== 'object' || errors === null || !('body' in errors) || !Array.isArray(errors.body)) return [];
  return errors.body.filter(isFieldError);
}

function messageOf(body: unknown): string | null {
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  return null;
}

/** Applies the §8 rules to a failed response and returns the error to throw. */
async function toApiError(response: Response): Promise<ApiError> {
  const body = await readJson(response);
  const serverMessage = messageOf(body);
  const { status } = response;
  if (status === 400) showToast({ message: serverMessage ?? UNKNOWN_ERROR_MESSAGE, type: 'error' });
  if (SESSION_ENDING_STATUSES.has(status) && hasToken()) await logout();
  const fieldErrors = status === 422 ? fieldErrorsOf(body) : [];
  return new ApiError(status, `Request failed with status code ${status}`, serverMessage, fieldErrors);
}

/** Sends a request; resolves with the raw response when it succeeded. */
export async function send(path: string, { method = 'GET', body, query, signal }: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = readToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, query), {
      method,
      headers,
      credentials: 'include',
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    // An abort is the caller's own doing: pass it on unchanged.
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, NETWORK_ERROR_MESSAGE);
  }
  if (!response.ok) throw await toApiError(response);
  return response;
}

/** A JSON call; with a schema the answer is checked, so callers never handle untyped data. */
export async function request<S extends z.ZodType>(path: string, schema: S, options?: RequestOptions): Promise<z.output<S>>;
export async function request(path: string, schema?: undefined, options?: RequestOptions): Promise<unknown>;
export async function request(path: string, schema?: z.ZodType, options: RequestOptions = {}): Promise<unknown> {
  const response = await send(path, options);
  const body = await readJson(response);
  return schema ? schema.parse(body) : body;
}

export type Download = { blob: Blob; filename: string };

/** The file name from Content-Disposition, or the fallback (console-spec §7: default config.conf). */
export function filenameFromDisposition(header: string | null, fallback: string): string {
  if (!header) return fallback;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (encoded?.[1]) {
    try {
      return decodeURIComponent(encoded[1].trim());
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain?.[1]?.trim() || fallback;
}

export async function download(path: string, fallbackName: string): Promise<Download> {
  const response = await send(path);
  return {
    blob: await response.blob(),
    filename: filenameFromDisposition(response.headers.get('content-disposition'), fallbackName),
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

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
