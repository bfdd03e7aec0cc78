import { LogEventSchema, routes, timing } from '@postern/contract';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { StreamState } from '../../lib/connection-store';
import { openStream } from '../../lib/sse';
import { appendLogLines, type LogLine } from './log-buffer';

/** Which stream to follow: a domain's access log, or one service's. */
export type LogSource = { domain: string } | { type: string; id: string };

const NO_LINES: readonly LogLine[] = [];

/**
 * The live lines of /api/logs/stream, at most 1000. After an error the stream reconnects 1 s later (the spec's "States
 * and transitions"), only while the session holds; it is closed when the component unmounts, i.e. when the page is
 * left.
 */
export function useLogLines(
  source: LogSource | null,
  onStateChange?: (state: StreamState) => void,
): readonly LogLine[] {
  const onStateChangeRef = useRef(onStateChange);
  useLayoutEffect(() => {
    onStateChangeRef.current = onStateChange;
  });
  // The query string is the stream's identity: a new source starts an empty view, a re-render does not. The view is
  // reset while rendering (react.dev, "you might not need an effect"), and lines are kept with their source, so a
  // closing stream's last batch never lands in the next source's view.
  const sourceKey = source ? new URLSearchParams(source).toString() : '';
  const [held, setHeld] = useState<{ sourceKey: string; lines: readonly LogLine[] }>({ sourceKey, lines: NO_LINES });
  if (held.sourceKey !== sourceKey) setHeld({ sourceKey, lines: NO_LINES });
  const nextIdRef = useRef(0);

  useEffect(() => {
    if (sourceKey === '') return undefined;
    return openStream({
      path: routes.logStream.path,
      query: Object.fromEntries(new URLSearchParams(sourceKey)),
      schema: LogEventSchema,
      onMessage: (batch) => {
        const entries = batch.map((text) => ({ id: nextIdRef.current++, text }));
        setHeld((current) =>
          current.sourceKey === sourceKey ? { sourceKey, lines: appendLogLines(current.lines, entries) } : current,
        );
      },
      reconnectMs: timing.logReconnectMs,
      onStateChange: (state) => onStateChangeRef.current?.(state),
    });
  }, [sourceKey]);

  return held.sourceKey === sourceKey ? held.lines : NO_LINES;
}
