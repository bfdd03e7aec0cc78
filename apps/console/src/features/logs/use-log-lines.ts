import { LogEventSchema, routes, timing } from '@postern/contract';
import { useEffect, useRef, useState } from 'react';
import type { StreamState } from '../../lib/connection-store';
import { openStream } from '../../lib/sse';
import { appendLogLines, type LogLine } from './log-buffer';

/** Which stream to follow: a domain's access log, or one service's. */
export type LogSource = { domain: string } | { type: string; id: string };

/**
 * The live lines of /api/logs/stream, at most 1000. After an error the stream reconnects 1 s later (console-spec §4),
 * only while the session holds; it is closed when the component unmounts, i.e. when the page is left.
 */
export function useLogLines(source: LogSource | null, onStateChange?: (state: StreamState) => void): readonly LogLine[] {
  const [lines, setLines] = useState<readonly LogLine[]>([]);
  const onStateChangeRef = useRef(onStateChange);
  onStateChangeRef.current = onStateChange;
  const nextIdRef = useRef(0);
  // The query string is the stream's identity: a new source starts an empty view, a re-render does not.
  const sourceKey = source ? new URLSearchParams(source).toString() : '';

  useEffect(() => {
    setLines([]);
    if (sourceKey === '') return undefined;
    return openStream({
      path: routes.logStream.path,
      query: Object.fromEntries(new URLSearchParams(sourceKey)),
      schema: LogEventSchema,
      onMessage: (batch) => {
        const entries = batch.map((text) => ({ id: nextIdRef.current++, text }));
        setLines((current) => appendLogLines(current, entries));
      },
      reconnectMs: timing.logReconnectMs,
      onStateChange: (state) => onStateChangeRef.current?.(state),
    });
  }, [sourceKey]);

  return lines;
}
