import type { LogLine, LogSource } from '../types.js';

// Fan-out of parsed access-log lines to subscribers. Lines are keyed by domain and by (type, service id);
// each key keeps a small ring of recent lines so a new subscriber sees context at once, then live batches.

export type LogFilter = Parameters<LogSource['subscribe']>[0];

export interface LogHubOptions {
  /** Lines are delivered in batches at most this often; 0 delivers at once (tests, fakes). */
  batchMs?: number;
  /** Recent lines kept per key. */
  recentPerKey?: number;
  /** Upper bound on distinct keys kept, so random Host headers cannot grow memory without limit. */
  maxKeys?: number;
}

export interface LogHub extends LogSource {
  publish(lines: LogLine[]): void;
  close(): void;
}

function keyOfFilter(filter: LogFilter): string {
  return 'domain' in filter ? `d:${filter.domain.toLowerCase()}` : `s:${filter.type}:${filter.id}`;
}

function keysOfLine(line: LogLine): string[] {
  return [
    ...(line.domain ? [`d:${line.domain.toLowerCase()}`] : []),
    ...(line.serviceId === null ? [] : [`s:${line.type}:${line.serviceId}`]),
  ];
}

interface Subscriber {
  onLines: (lines: string[]) => void;
  pending: string[];
}

export function createLogHub(options: LogHubOptions = {}): LogHub {
  const { batchMs = 200, recentPerKey = 100, maxKeys = 10_000 } = options;
  const recent = new Map<string, string[]>();
  const subscribers = new Map<string, Set<Subscriber>>();
  let timer: NodeJS.Timeout | null = null;

  function remember(key: string, text: string): void {
    let ring = recent.get(key);
    if (!ring) {
      if (recent.size >= maxKeys) {
        const oldest = recent.keys().next().value;
        if (oldest !== undefined) recent.delete(oldest);
      }
      ring = [];
      recent.set(key, ring);
    }
    ring.push(text);
    if (ring.length > recentPerKey) ring.splice(0, ring.length - recentPerKey);
  }

  function flush(): void {
    timer = null;
    for (const set of subscribers.values()) {
      for (const sub of set) {
        if (sub.pending.length === 0) continue;
        const lines = sub.pending;
        sub.pending = [];
        sub.onLines(lines);
      }
    }
  }

  return {
    publish(lines) {
      for (const line of lines) {
        for (const key of keysOfLine(line)) {
          remember(key, line.text);
          for (const sub of subscribers.get(key) ?? []) sub.pending.push(line.text);
        }
      }
      if (batchMs === 0) flush();
      else if (!timer) {
        timer = setTimeout(flush, batchMs);
        timer.unref();
      }
    },
    subscribe(filter, onLines) {
      const key = keyOfFilter(filter);
      const sub: Subscriber = { onLines, pending: [] };
      let set = subscribers.get(key);
      if (!set) subscribers.set(key, (set = new Set()));
      set.add(sub);
      const history = recent.get(key);
      if (history && history.length > 0) onLines([...history]);
      return () => {
        set.delete(sub);
        if (set.size === 0) subscribers.delete(key);
      };
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
      subscribers.clear();
    },
  };
}
