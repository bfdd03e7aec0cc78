import path from 'node:path';
import Docker from 'dockerode';
import { LABEL_PROBLEMS_MAX, LABEL_SERVICE_KEY_PATTERN, type LabelProblemReport } from '@postern/contract';
import type { AgentApi } from '../api.js';
import type { Output } from '../context.js';
import { CliError } from '../errors.js';
import type { System } from '../system.js';
import type { ContainerInfo, LabelProblem } from './labels.js';
import { reconcileLabels, type LabelApi, type RefusedCreations, type SettledAccess } from './reconcile.js';

// `connect --daemon --docker`: watches the local Docker engine and keeps the node's label-made services equal to
// what its containers' labels ask for (docs/LABELS.md). Docker's event stream triggers a pass within a moment of a
// container's start, stop or removal; a full pass also runs at start and every resync interval, so a missed event or
// a gateway that was unreachable is caught up. Problems are logged once each and kept in labels.json for `status`.

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';
/** Events come in bursts (compose starts several containers): one pass for the burst. */
const SETTLE_MS = 250;
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 60_000;
export const LABELS_STATE_FILE = 'labels.json';

export interface DockerEngine {
  listContainers(): Promise<ContainerInfo[]>;
  /** Calls `onEvent` for each container event; resolves when the stream ends, rejects when it fails. */
  watch(onEvent: () => void, signal: AbortSignal): Promise<void>;
}

interface ListedContainer {
  Names?: string[];
  State?: string;
  Labels?: Record<string, string> | null;
  HostConfig?: { NetworkMode?: string };
  Ports?: { IP?: string; PrivatePort: number; PublicPort?: number; Type: string }[] | null;
  NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> | null };
}

export function toContainerInfo(listed: ListedContainer): ContainerInfo {
  return {
    name: (listed.Names?.[0] ?? '').replace(/^\//, ''),
    running: listed.State === 'running',
    labels: listed.Labels ?? {},
    networkMode: listed.HostConfig?.NetworkMode ?? 'default',
    published: (listed.Ports ?? []).flatMap((port) =>
      port.PublicPort === undefined
        ? []
        : [{ privatePort: port.PrivatePort, publicPort: port.PublicPort, type: port.Type, ip: port.IP ?? '0.0.0.0' }],
    ),
    addresses: Object.values(listed.NetworkSettings?.Networks ?? {})
      .map((network) => network.IPAddress ?? '')
      .filter((address) => /^\d+\.\d+\.\d+\.\d+$/.test(address)),
  };
}

/** The engine behind a Unix socket, through dockerode (never a shell). */
export function openDockerEngine(socketPath: string, filter?: { key: string; value: string }): DockerEngine {
  const docker = new Docker({ socketPath });
  const labelFilter = filter === undefined ? {} : { label: [`${filter.key}=${filter.value}`] };
  return {
    async listContainers() {
      const listed = (await docker.listContainers({ all: true, filters: labelFilter })) as ListedContainer[];
      return listed.map(toContainerInfo);
    },
    async watch(onEvent, signal) {
      const stream = await docker.getEvents({ filters: { type: ['container'], ...labelFilter } });
      await new Promise<void>((resolve, reject) => {
        const stop = () => {
          (stream as unknown as { destroy?: () => void }).destroy?.();
          resolve();
        };
        signal.addEventListener('abort', stop, { once: true });
        stream.on('data', () => onEvent());
        stream.on('end', () => resolve());
        stream.on('error', (error: Error) => reject(error));
      });
    },
  };
}

export interface LabelWatcherOptions {
  engine: DockerEngine;
  api: LabelApi & Pick<AgentApi, 'getNode' | 'reportLabelProblems'>;
  system: System;
  log: Output;
  signal: AbortSignal;
  configDir: string;
  /** How often a full pass runs without an event (the daemon's refresh interval). */
  resyncMs: number;
}

export async function runLabelWatcher(options: LabelWatcherOptions): Promise<void> {
  const { engine, api, system, signal } = options;
  const say = (line: string) => options.log.write(`${new Date(system.now()).toISOString()} docker: ${line}\n`);
  let reported = new Set<string>();
  let lastFailure: string | null = null;
  const refused: RefusedCreations = new Map();
  const access: SettledAccess = new Map();
  let wake: (() => void) | null = null;
  let dirty = true;
  const poke = () => {
    dirty = true;
    wake?.();
  };

  let reportRefused: string | null = null;
  /**
   * The console's node page shows the problems too. A gateway that does not take the report (one from before it) or
   * refuses it is said once; publishing goes on either way.
   */
  const report = async (problems: LabelProblem[]) => {
    try {
      await api.reportLabelProblems(toReport(problems));
      reportRefused = null;
    } catch (error) {
      if (error instanceof CliError && error.name === 'TokenRejectedError') throw error;
      const message = messageOf(error);
      if (message !== reportRefused) say(`the gateway did not take the report of these problems: ${message}`);
      reportRefused = message;
    }
  };

  const pass = async (): Promise<boolean> => {
    try {
      const containers = await engine.listContainers();
      const node = await api.getNode();
      const outcome = await reconcileLabels(
        api,
        containers,
        { choosesHost: node.isGateway || node.isLocal },
        {
          refused,
          now: system.now(),
          access,
        },
      );
      for (const line of outcome.done) say(line);
      const now = new Set(outcome.problems.map(describeProblem));
      for (const line of now) if (!reported.has(line)) say(line);
      reported = now;
      await saveLabelProblems(system, options.configDir, outcome.problems);
      await report(outcome.problems);
      // A removal may make room for a creation refused before (two containers asking for one route).
      if (outcome.freed && outcome.problems.length > 0) dirty = true;
      if (lastFailure !== null) say('the Docker engine and the gateway answer again');
      lastFailure = null;
      return true;
    } catch (error) {
      if (error instanceof CliError && error.name === 'TokenRejectedError') throw error;
      // An engine or gateway that is away stays so for a while: said once, not at every retry.
      const message = messageOf(error);
      if (message !== lastFailure) say(`${message}; trying again`);
      lastFailure = message;
      return false;
    }
  };

  // The event stream, reopened with growing pauses when the engine goes away; every reopening runs a full pass.
  const stopped = () => signal.aborted;
  const events = (async () => {
    for (let pauseMs = RETRY_FIRST_MS; !stopped(); pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS)) {
      try {
        await engine.watch(poke, signal);
      } catch (error) {
        say(`the Docker engine's events: ${messageOf(error)}; reconnecting in ${pauseMs / 1000} s`);
      }
      if (stopped()) return;
      await system.sleep(pauseMs, signal).catch(() => undefined);
      poke();
    }
  })();

  say('watching the Docker engine for containers with postern.* labels');
  let lastFull = system.now();
  let failed = false;
  let retryMs = RETRY_FIRST_MS;
  while (!signal.aborted) {
    if (dirty || failed || system.now() - lastFull >= options.resyncMs) {
      dirty = false;
      lastFull = system.now();
      failed = !(await pass());
    }
    const waitMs = failed ? retryMs : Math.max(0, options.resyncMs - (system.now() - lastFull));
    // Failures wait longer each time, up to the resync interval.
    retryMs = failed ? Math.min(retryMs * 2, Math.max(RETRY_FIRST_MS, options.resyncMs)) : RETRY_FIRST_MS;
    await new Promise<void>((resolve) => {
      const timer = new AbortController();
      const done = () => {
        wake = null;
        timer.abort();
        signal.removeEventListener('abort', done);
        resolve();
      };
      // Let a burst of events settle into one pass.
      wake = () => void system.sleep(SETTLE_MS, timer.signal).then(done, done);
      signal.addEventListener('abort', done, { once: true });
      if (dirty) wake();
      else void system.sleep(waitMs, timer.signal).then(done, done);
    });
  }
  await events;
}

/** The report as the gateway takes it: at most 200 problems, each text one printable line within its bound. */
function toReport(problems: LabelProblem[]): LabelProblemReport[] {
  const line = (text: string, max: number) => {
    // eslint-disable-next-line no-control-regex -- control characters are what is taken out
    const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
    return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
  };
  return problems.slice(0, LABEL_PROBLEMS_MAX).map((problem) => ({
    container: line(problem.container, 200) || '?',
    ...(problem.key !== undefined && LABEL_SERVICE_KEY_PATTERN.test(problem.key) ? { key: problem.key } : {}),
    message: line(problem.message, 600) || '?',
  }));
}

function describeProblem(problem: LabelProblem): string {
  return `container ${problem.container}${problem.key === undefined ? '' : ` (${problem.key})`}: ${problem.message}`;
}

export function labelsStatePath(configDir: string): string {
  return path.join(configDir, LABELS_STATE_FILE);
}

/** What `postern status` shows: each container whose labels could not be published, and why. */
async function saveLabelProblems(system: System, configDir: string, problems: LabelProblem[]): Promise<void> {
  await system.writePrivateFile(
    labelsStatePath(configDir),
    `${JSON.stringify({ checkedAt: new Date(system.now()).toISOString(), problems }, null, 2)}\n`,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
