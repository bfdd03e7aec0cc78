import { LogEventSchema, routes } from '@postern/contract';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

// Follows /api/logs/stream the way the console's log viewer does: an SSE connection whose messages are JSON
// arrays of lines. Lines are collected so a test can wait for the one it expects.

export interface LogStream {
  readonly lines: string[];
  waitForLine(matches: (line: string) => boolean, timeoutMs: number): Promise<string>;
  close(): void;
}

export type LogStreamQuery = { domain: string } | { type: 'http' | 'tcp'; id: number };

export async function openLogStream(baseUrl: string, token: string, query: LogStreamQuery): Promise<LogStream> {
  const params = new URLSearchParams({ token });
  for (const [key, value] of Object.entries(query)) params.set(key, String(value));
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}${routes.logStream.path}?${params.toString()}`, {
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (!response.ok || response.body === null)
    throw new Error(`log stream answered ${response.status}: ${await response.text()}`);
  const lines: string[] = [];
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const pump = async (): Promise<void> => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data !== '') lines.push(...LogEventSchema.parse(JSON.parse(data)));
      }
    }
  };
  // Ends with an AbortError when the test closes the stream; nothing to report then.
  pump().catch(() => undefined);
  return {
    lines,
    waitForLine: (matches, timeoutMs) =>
      waitFor(() => lines.find(matches), {
        timeoutMs,
        what: `a log line matching ${String(matches)} (seen: ${lines.slice(-5).join(' | ')})`,
      }),
    close: () => controller.abort(),
  };
}
