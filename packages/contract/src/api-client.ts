import type { z } from 'zod';
import { ApiError, readErrorBody } from './errors.js';
import type { EmptyResponse, EventsResponse, FileResponse, JsonResponse, ResponseSpec } from './operations.js';
import { buildPath, type PathParamName, type PathParams, type Route } from './routes-core.js';

// The typed client of the operation table, shared by the console, the CLI and the e2e harness. It builds the URL
// from the operation, sends JSON, checks a JSON answer against the operation's schema and turns every other status
// into an ApiError carrying the error envelope. How bytes travel is the caller's: the console uses fetch, the CLI its
// own TLS-pinning client. Imports no zod at run time (only types): a bare route (routes.ts) can be called without
// loading any schema, which the console's first page relies on.

export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface TransportResponse {
  status: number;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
}

/** Sends one request; rejects only when no answer arrived (network, abort, timeout). */
export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

/** `fetch` as a transport; `init` adds options such as `credentials`. */
export function fetchTransport(init: Pick<RequestInit, 'credentials'> = {}): Transport {
  return async ({ method, url, headers, body, signal }) => {
    const response = await fetch(url, {
      ...init,
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(signal ? { signal } : {}),
    });
    const text = await response.text();
    const answerHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => (answerHeaders[name.toLowerCase()] = value));
    return { status: response.status, headers: answerHeaders, body: text };
  };
}

export type QueryValue = string | number | boolean | null | undefined;
export type QueryRecord = Readonly<Record<string, QueryValue>>;

/** Appends the query; undefined, null and '' values are left out. */
export function withQuery(path: string, query: QueryRecord = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The file name from Content-Disposition (RFC 6266 `filename*` first), or null. */
export function filenameFromDisposition(header: string | null | undefined): string | null {
  if (!header) return null;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (encoded?.[1]) {
    try {
      return decodeURIComponent(encoded[1].trim());
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename="?([^";]+)"?/i.exec(header);
  return plain?.[1]?.trim() || null;
}

/** A downloaded file (`file` operations). */
export interface FileDownload {
  content: string;
  /** From Content-Disposition; null when it names none. */
  filename: string | null;
  mediaType: string | null;
}

/** The answer did not match the operation's schema: another version of the server, or not a Postern server. */
export class UnexpectedAnswerError extends Error {
  override name = 'UnexpectedAnswerError';
  constructor(
    readonly route: Route,
    readonly issues: readonly { path: readonly PropertyKey[]; message: string }[],
  ) {
    super(
      `unexpected answer to ${route.method} ${route.path}: ${issues.map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`).join('; ')}`,
    );
  }
}

type Loose<T> = { [K in keyof T]?: T[K] | null | undefined };
type IsOperation<O> = O extends { response: ResponseSpec } ? true : false;

type ParamsInput<O extends Route> = [PathParamName<O['path']>] extends [never]
  ? { params?: undefined }
  : { params: PathParams<O['path']> };
type QueryInput<O> = O extends { query: infer Q extends z.ZodType }
  ? { query?: Loose<z.output<Q>> }
  : IsOperation<O> extends true
    ? { query?: undefined }
    : { query?: QueryRecord };
type BodyInput<O> = O extends { body: infer B extends z.ZodType }
  ? { body: z.output<B> }
  : IsOperation<O> extends true
    ? { body?: undefined }
    : { body?: unknown };

/** What a call takes: path parameters, query and body as the operation declares them, and an abort signal. */
export type CallInput<O extends Route> = ParamsInput<O> & QueryInput<O> & BodyInput<O> & { signal?: AbortSignal };

/** What a call resolves with: the parsed JSON, nothing (204), the file, or `unknown` for a bare route. */
export type CallOutput<O> = O extends { response: JsonResponse<infer S> }
  ? z.output<S>
  : O extends { response: EmptyResponse }
    ? undefined
    : O extends { response: FileResponse }
      ? FileDownload
      : unknown;

/** The arguments after the operation; event streams are opened with `url()` and an EventSource, not called. */
export type CallArgs<O extends Route> = O extends { response: EventsResponse }
  ? [input: never]
  : object extends CallInput<O>
    ? [input?: CallInput<O>]
    : [input: CallInput<O>];

export interface ApiClientOptions {
  transport?: Transport;
  /** Origin (and base path) the API's paths are relative to; default '' (the page's own origin). */
  baseUrl?: string;
  /** The bearer token, read on every call; null/undefined: none. */
  token?: string | null | (() => string | null | undefined);
}

export interface ApiClient {
  /** Calls an operation (or a bare route, whose answer is then `unknown`); non-2xx answers reject with ApiError. */
  call<const O extends Route>(operation: O, ...args: CallArgs<O>): Promise<CallOutput<O>>;
  /** The operation's URL with its path parameters and query filled in (event streams). */
  url<const O extends Route>(operation: O, input?: Omit<CallInput<O>, 'body' | 'signal'>): string;
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function responseOf(route: Route): ResponseSpec | undefined {
  return 'response' in route ? (route as { response: ResponseSpec }).response : undefined;
}

export function createApiClient(options: ApiClientOptions = {}): ApiClient {
  const transport = options.transport ?? fetchTransport();
  const base = (options.baseUrl ?? '').replace(/\/+$/, '');
  const tokenOf = (): string | null | undefined =>
    typeof options.token === 'function' ? options.token() : options.token;

  const url = (route: Route, input: { params?: object | undefined; query?: object | undefined } = {}): string =>
    base +
    withQuery(
      buildPath(route.path, (input.params ?? {}) as Record<string, string | number>),
      (input.query ?? {}) as QueryRecord,
    );

  async function call(
    route: Route,
    input: { params?: object; query?: object; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const response = responseOf(route);
    if (response?.kind === 'events')
      throw new Error(`${route.method} ${route.path} is an event stream: open url() with an EventSource`);
    const headers: Record<string, string> = {
      Accept: response?.kind === 'file' ? response.mediaType : 'application/json',
    };
    const token = tokenOf();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (input.body !== undefined) headers['Content-Type'] = 'application/json';
    const answer = await transport({
      method: route.method,
      url: url(route, input),
      headers,
      ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (answer.status < 200 || answer.status > 299) {
      const error = readErrorBody(parseJson(answer.body));
      throw new ApiError(answer.status, undefined, {
        serverMessage: error.message,
        code: error.code,
        fieldErrors: answer.status === 422 ? error.fieldErrors : [],
        messageCode: error.messageCode,
        params: error.params,
      });
    }
    if (response?.kind === 'empty') return undefined;
    if (response?.kind === 'file') {
      return {
        content: answer.body,
        filename: filenameFromDisposition(answer.headers['content-disposition']),
        mediaType: answer.headers['content-type'] ?? null,
      };
    }
    const body = parseJson(answer.body);
    if (response?.kind !== 'json') return body;
    const parsed = response.schema.safeParse(body);
    if (!parsed.success) throw new UnexpectedAnswerError(route, parsed.error.issues);
    return parsed.data;
  }

  return { call: call as ApiClient['call'], url };
}
