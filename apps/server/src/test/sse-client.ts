import { request } from 'node:http';

/** A minimal EventSource for tests: collects `data:` events of a real HTTP stream and can wait for the n-th. */
export interface SseTestClient {
  status: number;
  events: unknown[];
  comments: string[];
  waitForEvents(count: number, timeoutMs?: number): Promise<unknown[]>;
  /** Calls `listener` when the server ends the stream. */
  onEnd(listener: () => void): void;
  close(): void;
}

export function connectSse(url: string, headers: Record<string, string> = {}): Promise<SseTestClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: unknown[] = [];
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
          if (block.startsWith(':')) comments.push(block.slice(1).trim());
          else if (block.startsWith('data: ')) events.push(JSON.parse(block.slice(6)));
        }
        for (const wake of waiters.splice(0)) wake();
      });
      resolve({
        status: res.statusCode ?? 0,
        events,
        comments,
        async waitForEvents(count, timeoutMs = 2000) {
          const deadline = Date.now() + timeoutMs;
          while (events.length < count) {
            if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${events.length}`);
            await new Promise<void>((wake) => {
              waiters.push(wake);
              setTimeout(wake, 50).unref();
            });
          }
          return events;
        },
        onEnd: (listener) => res.on('end', listener),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
