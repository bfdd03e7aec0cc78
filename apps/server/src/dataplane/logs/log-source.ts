import type { LogLine, LogSource } from '../types.js';
import { parseAccessLogLine } from './format.js';
import { createLogHub, type LogHubOptions } from './hub.js';
import { createTailer, type Tailer, type TailerOptions } from './tailer.js';

/** One tailer per access-log file, all feeding one hub that fans out to subscribers. */
export interface AccessLogSource extends LogSource {
  close(): void;
}

export function createAccessLogSource(
  files: string[],
  options: LogHubOptions & TailerOptions & { onLines?: (lines: LogLine[]) => void } = {},
): AccessLogSource {
  const hub = createLogHub(options);
  const tailers: Tailer[] = files.map((file) =>
    createTailer(
      file,
      (raw) => {
        const lines = raw.flatMap((line) => parseAccessLogLine(line) ?? []);
        options.onLines?.(lines);
        hub.publish(lines);
      },
      options,
    ),
  );
  return {
    subscribe: (filter, onLines) => hub.subscribe(filter, onLines),
    close() {
      for (const tailer of tailers) tailer.close();
      hub.close();
    },
  };
}
