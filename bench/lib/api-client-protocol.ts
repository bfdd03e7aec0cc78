// Messages between bench/api.ts (the server process) and its load-generator child (lib/api-load-client.ts).
// The load runs in its own process so generating requests never shares the server's event loop.

export interface LoadCommand {
  cmd: 'load';
  url: string;
  headers: Record<string, string>;
  /** Offered requests per second, fixed (open loop). */
  rate: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LoadResult {
  cmd: 'load';
  /** Per successful request: ms from its scheduled start to the end of its response (warm-up excluded). */
  latencies: number[];
  errors: number;
}

export interface SseOpenCommand {
  cmd: 'sse-open';
  url: string;
  count: number;
}

export interface SseOpenResult {
  cmd: 'sse-open';
  /** Subscribers that received their first event (the current page). */
  open: number;
  failed: number;
}

/** Forget the events seen so far; the next `sse-wait` counts events from here on. */
export interface SseArmCommand {
  cmd: 'sse-arm';
}

export interface SseWaitCommand {
  cmd: 'sse-wait';
  timeoutMs: number;
}

export interface SseWaitResult {
  cmd: 'sse-wait';
  /** Open subscribers that received at least one event since `sse-arm`. */
  received: number;
  open: number;
  ms: number;
}

export type ClientCommand =
  LoadCommand | SseOpenCommand | SseArmCommand | SseWaitCommand | { cmd: 'sse-close' } | { cmd: 'exit' };
export type ClientReply = LoadResult | SseOpenResult | SseWaitResult | { cmd: 'sse-arm' } | { cmd: 'sse-close' };
