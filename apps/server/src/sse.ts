import type { Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { timing } from '@postern/contract';
import { securityHeadersFor } from './http/security-headers.js';

export interface SseConnection {
  /** Sends one JSON value as a `data:` event. */
  send(value: unknown): void;
  /**
   * Sends an already serialised JSON text (a broadcast serialises once for all its subscribers), as a named event
   * when `event` is given (EventSource delivers those to `addEventListener(event)` only, never to `onmessage`).
   */
  sendJson(json: string, event?: string): void;
  /** The console session that opened the stream (null: none); the stream ends with it. */
  sessionId: string | null;
  /** When that session ends (ms since the epoch), as read when the stream was authenticated; null: no session. */
  sessionExpiresAtMs: number | null;
  /** Resolves when the client goes away. */
  closed: Promise<void>;
  close(): void;
}

/** Open streams per HTTP server, so shutdown can end them (they would otherwise hold `close()` forever). */
const openStreams = new WeakMap<Server, Set<SseConnection>>();

/** Ends every open event stream of `server`; app.ts calls it before the server waits for connections. */
export function closeAllSse(server: Server): void {
  for (const connection of openStreams.get(server) ?? []) connection.close();
}

/** The open event streams of `server` (a snapshot: closing one while iterating is safe). */
export function listOpenSse(server: Server): SseConnection[] {
  return [...(openStreams.get(server) ?? [])];
}

/**
 * Turns a request into a server-sent event stream: headers, a comment heartbeat every 15 s (keeps proxies
 * from timing the stream out), and cleanup when the client disconnects. The caller subscribes to its source
 * and unsubscribes when `closed` resolves.
 */
export function openSse(request: FastifyRequest, reply: FastifyReply): SseConnection {
  reply.hijack();
  const raw = reply.raw;
  // A hijacked reply's headers are only these: the security headers too (http/security-headers.ts).
  raw.writeHead(200, {
    ...securityHeadersFor(request),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.write(': connected\n\n');
  let isOpen = true;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), timing.sseHeartbeatMs);
  heartbeat.unref();
  const finish = () => {
    if (!isOpen) return;
    isOpen = false;
    clearInterval(heartbeat);
    resolveClosed();
  };
  request.raw.on('close', finish);
  const server = request.server.server;
  const registry = openStreams.get(server) ?? new Set<SseConnection>();
  openStreams.set(server, registry);
  const connection: SseConnection = {
    send(value) {
      if (isOpen) raw.write(`data: ${JSON.stringify(value)}\n\n`);
    },
    sendJson(json, event) {
      if (isOpen) raw.write(event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`);
    },
    sessionId: request.session?.sessionId ?? null,
    sessionExpiresAtMs: request.session?.expiresAtMs ?? null,
    closed,
    close() {
      finish();
      raw.end();
    },
  };
  registry.add(connection);
  void closed.then(() => registry.delete(connection));
  return connection;
}
