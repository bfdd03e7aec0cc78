import { useLayoutEffect, useRef } from 'react';
import { t } from '../../i18n/i18n';
import type { LogLine } from './log-buffer';
import { getLogLineClass } from './log-colour';

/** How close to the bottom (px) still counts as "following" the stream. */
const FOLLOW_THRESHOLD_PX = 24;

/**
 * Dark monospace list of log lines (the spec's "Screens and routes"). It follows new lines while the reader is at the
 * bottom and stays put once they scroll up to read.
 */
export function LogViewer({ lines, emptyText = t('logs.waiting') }: { lines: readonly LogLine[]; emptyText?: string }) {
  const containerRef = useRef<HTMLDivElement>(null);
  const isFollowingRef = useRef(true);

  useLayoutEffect(() => {
    const container = containerRef.current;
    if (container && isFollowingRef.current) container.scrollTop = container.scrollHeight;
  }, [lines]);

  const onScroll = () => {
    const container = containerRef.current;
    if (!container) return;
    isFollowingRef.current =
      container.scrollHeight - container.scrollTop - container.clientHeight <= FOLLOW_THRESHOLD_PX;
  };

  return (
    <div
      ref={containerRef}
      onScroll={onScroll}
      className="h-[70vh] overflow-y-auto rounded-lg border border-transparent bg-gray-950 dark:border-gray-600 p-4 font-mono text-xs leading-5 text-gray-300 shadow-inner focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-500"
      role="log"
      aria-live="polite"
      aria-label={t('logs.title')}

      // In the Tab order, so the keyboard scrolls it (arrows, Page Up/Down, Home/End); scrolling up stops following.
      tabIndex={0}
    >
      {lines.length === 0 ? (
        <p className="text-gray-400">{emptyText}</p>
      ) : (
        <ol>
          {lines.map((line) => (
            <li key={line.id} className={`whitespace-pre-wrap break-all ${getLogLineClass(line.text)}`}>
              {line.text}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
