import { withQuery, type QueryValue } from '@postern/contract';
import type { z } from 'zod';
import { registerStream, type StreamState } from './connection-store';
import { readToken } from './session';
import { checkSession } from './session-check';

// EventSource cannot send headers, so event streams carry the session token as a query parameter (the spec's "Roles and
// permissions"). Nor does it show why a stream failed, so after an error the session is checked through the API client
// before the stream is reopened: an ended session signs out like any other call, and a live one reconnects after the
// spec's fixed delay (the spec's "Business constants and limits": log stream reconnect delay 1 second). Beyond the
// spec, a stream that keeps failing waits longer each time (doubling up to RECONNECT_MAX_MS) instead of failing once a
// second, and starts again at the spec's delay once it has opened; each stream reports its state to the connection
// store (the shell's banner).

/** The longest wait between two attempts of a stream that keeps failing. */
export const RECONNECT_MAX_MS = 30_000;

/** The wait before attempt `failures` (1 = after the first error): the base delay, doubled per further failure. */
export function reconnectDelay(baseMs: number, failures: number): number {
  return Math.min(RECONNECT_MAX_MS, baseMs * 2 ** Math.max(0, failures - 1));
}

type StreamBase = {
  path: string;
  query?: Record<string, QueryValue>;
  /** Called with the error event (default: logged); the stream is closed unless `reconnectMs` is set. */
  onError?: (event: Event) => void;
  /**
   * Reopen delay after the first error (log viewer: 1 s), doubled after each further one; omit to stay closed.
   * Only reopened while the session holds.
   */
  reconnectMs?: number | undefined;
  /** The stream's state: connecting, open (the server answered), retrying (failed, waiting to reopen). */
  onStateChange?: (state: StreamState) => void;
};

export type StreamOptions<S extends z.ZodType> = StreamBase & {
  /** Each `data:` payload is JSON checked against this schema. */
  schema: S;
  /** Listen to this named event (`event: NAME`) instead of unnamed messages. */
  event?: string;
  onMessage: (value: z.output<S>) => void;
};

/**
 * One stream carrying several named events: each handler gets its event's `data:` as parsed JSON (undefined when it
 * is not JSON) and checks it itself, so a page that must stay small can check without zod.
 */
export type EventStreamOptions = StreamBase & { events: Record<string, (data: unknown) => void> };

export function streamUrl(path: string, query: Record<string, QueryValue> = {}): string {
  return withQuery(path, { ...query, token: readToken() ?? '' });
}

/** Opens the stream; returns a function that closes it for good (call it when the page is left). */
export function openStream<S extends z.ZodType>(options: StreamOptions<S>): () => void {
  const receive = (data: unknown): void => {
    const parsed = options.schema.safeParse(data);
    if (parsed.success) options.onMessage(parsed.data);
    else console.error('unexpected stream message', parsed.error);
  };
  return openEventStream({ ...options, events: { [options.event ?? 'message']: receive } });
}

/** Opens a stream of several named events; the same reconnect and session rules as `openStream`. */
export function openEventStream(options: EventStreamOptions): () => void {
  let source: EventSource | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let sessionCheck: AbortController | null = null;
  let closed = false;
  let failures = 0;
  const registration = registerStream();
  const setState = (state: StreamState): void => {
    registration.report(state);
    options.onStateChange?.(state);
  };

  const recover = async (): Promise<void> => {
    sessionCheck = new AbortController();
    const isSessionValid = await checkSession(sessionCheck.signal);
    sessionCheck = null;
    if (closed || !isSessionValid || options.reconnectMs === undefined) {
      if (!closed) registration.remove();
      return;
    }
    failures += 1;
    setState('retrying');
    retryTimer = setTimeout(connect, reconnectDelay(options.reconnectMs, failures));
  };

  const connect = (): void => {
    const current = new EventSource(streamUrl(options.path, options.query), { withCredentials: true });
    source = current;
    current.onopen = () => {
      failures = 0;
      setState('open');
    };
    for (const [name, handle] of Object.entries(options.events)) {
      const receive = (event: MessageEvent<string>): void => handle(safeJson(event.data));
      // Unnamed messages arrive as 'message'.
      if (name === 'message') current.onmessage = receive;
      else current.addEventListener(name, receive);
    }
    current.onerror = (event) => {
      // Closing stops the browser's own reconnect loop, which would retry a refused stream every few seconds.
      current.close();
      source = null;
      if (options.onError) options.onError(event);
      else console.error(`event stream ${options.path} failed`);
      void recover();
    };
  };

  setState('connecting');
  connect();
  return () => {
    closed = true;
    registration.remove();
    clearTimeout(retryTimer);
    sessionCheck?.abort();
    source?.close();
    source = null;
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
