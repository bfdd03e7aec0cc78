import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { ManagedProcess } from './processes.js';

// The evidence of a failed system test: what every gateway this test file started wrote (the control plane's stdout
// and stderr, every boot of it) and the logs in its data directory (nginx's error logs), saved under
// artifacts/e2e-logs/<file>/<test>/, and the last lines of each in the failure itself. CI keeps artifacts/; a lab
// removes the data directories when it is destroyed, so their logs are read into memory just before (`snapshot`).

const LOG_BYTES = 1024 * 1024;
const FAILURE_LINES = 40;
const NGINX_LINES = 10;

interface StartedGateway {
  name: string;
  dataDir: string;
  /** Each boot's process, first to last (restart() adds one). */
  runs: ManagedProcess[];
  /** The data directory's logs as read when its lab was destroyed: path inside the directory → text. */
  snapshot: Map<string, string> | null;
}

const started: StartedGateway[] = [];

/** Called by startGateway: the gateway's name (its namespace), data directory and processes count as evidence. */
export function recordGateway(
  name: string,
  dataDir: string,
): { addRun: (run: ManagedProcess) => void; snapshot: () => void } {
  const gateway: StartedGateway = { name, dataDir, runs: [], snapshot: null };
  started.push(gateway);
  return {
    addRun: (run) => gateway.runs.push(run),
    snapshot: () => {
      gateway.snapshot = readLogs(dataDir);
    },
  };
}

/** `*.log` files under `dir` (nginx/logs/error.log, the stream instances' error logs), the last MiB of each. */
function readLogs(dir: string): Map<string, string> {
  const logs = new Map<string, string>();
  const walk = (at: string): void => {
    let entries;
    try {
      entries = readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.log')) {
        try {
          const size = statSync(path).size;
          const text = readFileSync(path, 'utf8');
          logs.set(relative(dir, path), size > LOG_BYTES ? text.slice(-LOG_BYTES) : text);
        } catch {
          // Removed while read: nothing to keep.
        }
      }
    }
  };
  walk(dir);
  return logs;
}

const lastLines = (text: string, count: number): string => text.trimEnd().split('\n').slice(-count).join('\n');
const slug = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);

/**
 * Saves every started gateway's output and logs under `root`/<file>/<test> and returns the last lines of each, for
 * the failure message; empty when this file started no gateway.
 */
export function saveGatewayEvidence(root: string, file: string, test: string): string {
  if (started.length === 0) return '';
  const dir = join(root, slug(basename(file).replace(/\.test\.ts$/, '')), slug(test));
  const parts: string[] = [];
  for (const [index, gateway] of started.entries()) {
    // Numbered: a gateway restored into the same namespace as the one before it has the same name.
    const into = join(dir, `${String(index + 1)}-${slug(gateway.name)}`);
    mkdirSync(into, { recursive: true });
    const output = gateway.runs
      .map((run, index) => {
        const state = run.isRunning ? 'running' : 'exited';
        return `--- boot ${String(index + 1)} (pid ${String(run.pid)}, ${state}) ---\n${run.text}`;
      })
      .join('\n');
    writeFileSync(join(into, 'control-plane.log'), output);
    const logs = existsSync(gateway.dataDir)
      ? readLogs(gateway.dataDir)
      : (gateway.snapshot ?? new Map<string, string>());
    for (const [path, text] of logs) writeFileSync(join(into, path.replaceAll('/', '-')), text);
    parts.push(
      `--- gateway ${String(index + 1)} ${gateway.name}: the last ${String(FAILURE_LINES)} lines of its output ---\n` +
        lastLines(gateway.runs.at(-1)?.text ?? '', FAILURE_LINES),
    );
    for (const [path, text] of logs)
      if (basename(path) === 'error.log' && text.trim() !== '')
        parts.push(
          `--- gateway ${String(index + 1)} ${gateway.name}: ${path}, the last lines ---\n${lastLines(text, NGINX_LINES)}`,
        );
  }
  return `${parts.join('\n')}\n(all of it in ${dir})`;
}
