import type { z } from 'zod';
import { withQuery } from './api';
import type { QueryValue } from './api';
import { hasToken, readToken } from './session';

// EventSource cannot send headers, so event streams carry the session token as a query parameter (console-spec §6).

export type StreamOptions<S extends z.ZodType> = {
  path: string;
  query?: Record<string, QueryValue>;
  /** Each `data:` payload is JSON checked against this schema. */
  schema: S;
  onMessage(value: z.output<S>): void;
  /** Called with the error; the stream is closed unless `reconnectMs` is set. */
  onError?(error: unknown): void;
  /** Reopen this many ms after an error (log viewer: 1 s); omit to stay closed. */
  reconnectMs?: number;
};

export function streamUrl(path: string, query: Record<string, QueryValue> = {}): string {
  return withQuery(path, { ...query, token: readToken() ?? '' });
}

/** Opens the stream; returns a function that closes it for good (call it when the page is left). */
export function openStream<S extends z.ZodType>(options: StreamOptions<S>): () => void {
  let source: EventSource | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const connect = (): void => {
    source = new EventSource(streamUrl(options.path, options.query), { withCredentials: true });
    source.onmessage = (event: MessageEvent<string>) => {
      const parsed = options.schema.safeParse(safeJson(event.data));
      if (parsed.success) options.onMessage(parsed.data);
      else console.error('unexpected stream message', parsed.error);
    };
    source.onerror = (event) => {
      source?.close();
      source = null;
      (options.onError ?? logStreamError)(event);
      // Without a session every retry would be refused: stop instead of knocking once a second.
      if (!closed && options.reconnectMs !== undefined && hasToken()) retryTimer = setTimeout(connect, options.reconnectMs);
    };
  };

  connect();
  return () => {
    closed = true;
    clearTimeout(retryTimer);
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

function logStreamError(error: unknown): void {
  console.error('event stream error', error);
}
