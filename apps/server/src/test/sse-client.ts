import { request } from 'node:http';

/** A minimal EventSource for tests: collects `data:` events of a real HTTP stream and can wait for the n-th. */
export interface SseTestClient {
  status: number;
  /** Unnamed events (what EventSource's onmessage gets). */
  events: unknown[];
  /** Named events (`event: NAME`), in order. */
  namedEvents: { event: string; data: unknown }[];
  comments: string[];
  waitForEvents(count: number, timeoutMs?: number): Promise<unknown[]>;
  waitForNamedEvents(count: number, timeoutMs?: number): Promise<{ event: string; data: unknown }[]>;
  /** Calls `listener` when the server ends the stream. */
  onEnd(listener: () => void): void;
  close(): void;
}

export function connectSse(url: string, headers: Record<string, string> = {}): Promise<SseTestClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: unknown[] = [];
      const namedEvents: { event: string; data: unknown }[] = [];
      const comments: string[] = [];
      const waiters: (() => void)[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const named = /^event: (.+)\ndata: ([^]*)$/.exec(block);
          if (block.startsWith(':')) comments.push(block.slice(1).trim());
          else if (named) namedEvents.push({ event: named[1] ?? '', data: JSON.parse(named[2] ?? '') });
          else if (block.startsWith('data: ')) events.push(JSON.parse(block.slice(6)));
        }
        for (const wake of waiters.splice(0)) wake();
      });
      const waitFor = async <T>(list: T[], count: number, timeoutMs: number): Promise<T[]> => {
        const deadline = Date.now() + timeoutMs;
        while (list.length < count) {
          if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${list.length}`);
          await new Promise<void>((wake) => {
            waiters.push(wake);
            setTimeout(wake, 50).unref();
          });
        }
        return list;
      };
      resolve({
        status: res.statusCode ?? 0,
        events,
        namedEvents,
        comments,
        waitForEvents: (count, timeoutMs = 2000) => waitFor(events, count, timeoutMs),
        waitForNamedEvents: (count, timeoutMs = 2000) => waitFor(namedEvents, count, timeoutMs),
        onEnd: (listener) => res.on('end', listener),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
