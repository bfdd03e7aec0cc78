import { Agent, request, type ClientRequest } from 'node:http';
import type {
  ClientCommand,
  ClientReply,
  LoadCommand,
  LoadResult,
  SseOpenResult,
  SseWaitResult,
} from './api-client-protocol.js';

// The load generator child of bench/api.ts: an open-loop HTTP load (requests start on a fixed schedule whatever
// the server's speed, and latency counts from the scheduled start, so a slow server cannot hide its queueing
// delay) and a crowd of idle SSE subscribers. Talks to its parent over IPC; only ever to 127.0.0.1.

const REQUEST_TIMEOUT_MS = 10_000;

/** One keep-alive agent per target, kept across slices so connections are reused as a real client would. */
const agents = new Map<string, Agent>();

async function runLoad(command: LoadCommand): Promise<LoadResult> {
  const target = new URL(command.url);
  if (target.hostname !== '127.0.0.1') throw new Error('the benchmark only talks to 127.0.0.1');
  let agent = agents.get(target.host);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 256 });
    agents.set(target.host, agent);
  }
  const keepAlive = agent;
  const interval = 1000 / command.rate;
  const warmup = Math.round(command.warmupSeconds * command.rate);
  const total = warmup + Math.round(command.seconds * command.rate);
  const latencies: number[] = [];
  let errors = 0;
  let finished = 0;

  await new Promise<void>((resolve) => {
    const record = (index: number, scheduled: number, ok: boolean): void => {
      if (index >= warmup) {
        if (ok) latencies.push(performance.now() - scheduled);
        else errors++;
      }
      if (++finished === total) resolve();
    };
    const fire = (index: number, scheduled: number): void => {
      const req = request(
        {
          agent: keepAlive,
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          headers: command.headers,
        },
        (res) => {
          res.resume();
          res.on('end', () => record(index, scheduled, res.statusCode === 200));
          res.on('error', () => record(index, scheduled, false));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('timeout')));
      req.on('error', () => record(index, scheduled, false));
      req.end();
    };
    const start = performance.now() + 20;
    let next = 0;
    const tick = (): void => {
      const now = performance.now();
      // Everything due is sent now; a late timer never skips a request (that would be coordinated omission).
      while (next < total && start + next * interval <= now) {
        fire(next, start + next * interval);
        next++;
      }
      if (next < total) setTimeout(tick, 1);
    };
    tick();
  });
  return { cmd: 'load', latencies, errors };
}

interface Subscriber {
  req: ClientRequest;
  events: number;
}

const subscribers: Subscriber[] = [];
const sseAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
let armedAt = new Map<Subscriber, number>();

/** Opens one subscriber; resolves once its first event (the current page) arrived, false on failure. */
function openSubscriber(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const req = request(
      { agent: sseAgent, host: url.hostname, port: url.port, path: url.pathname + url.search },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          settle(false);
          return;
        }
        const sub: Subscriber = { req, events: 0 };
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            if (buffer.startsWith('data: ')) sub.events++;
            buffer = buffer.slice(end + 2);
          }
          if (sub.events > 0 && !settled) {
            subscribers.push(sub);
            settle(true);
          }
        });
      },
    );
    // A stream whose first event never comes counts as a failure instead of stalling the run. (settle() only
    // runs from I/O callbacks, after this line.)
    const timer = setTimeout(() => {
      settle(false);
      req.destroy();
    }, REQUEST_TIMEOUT_MS);
    req.on('error', () => settle(false));
    req.end();
  });
}

async function openSubscribers(urlText: string, count: number): Promise<SseOpenResult> {
  const url = new URL(urlText);
  if (url.hostname !== '127.0.0.1') throw new Error('the benchmark only talks to 127.0.0.1');
  let failed = 0;
  const batch = 200; // stays well under the listen backlog
  for (let opened = 0; opened < count; opened += batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(batch, count - opened) }, () => openSubscriber(url)),
    );
    failed += results.filter((ok) => !ok).length;
  }
  return { cmd: 'sse-open', open: subscribers.length, failed };
}

async function waitForEvents(timeoutMs: number): Promise<SseWaitResult> {
  const started = performance.now();
  const deadline = started + timeoutMs;
  const countReceived = (): number => subscribers.filter((sub) => sub.events > (armedAt.get(sub) ?? 0)).length;
  while (countReceived() < subscribers.length && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { cmd: 'sse-wait', received: countReceived(), open: subscribers.length, ms: performance.now() - started };
}

async function handle(command: ClientCommand): Promise<ClientReply | null> {
  switch (command.cmd) {
    case 'load':
      return runLoad(command);
    case 'sse-open':
      return openSubscribers(command.url, command.count);
    case 'sse-arm':
      armedAt = new Map(subscribers.map((sub) => [sub, sub.events]));
      return { cmd: 'sse-arm' };
    case 'sse-wait':
      return waitForEvents(command.timeoutMs);
    case 'sse-close':
      for (const sub of subscribers.splice(0)) sub.req.destroy();
      return { cmd: 'sse-close' };
    case 'exit':
      process.exit(0);
  }
}

process.on('message', (message: ClientCommand) => {
  handle(message).then(
    (reply) => reply && process.send?.(reply),
    (error: unknown) => {
      process.stderr.write(`load client failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
});
// The parent going away must end this process too, whatever it was doing.
process.on('disconnect', () => process.exit(0));
