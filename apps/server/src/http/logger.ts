import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import { withoutQueryParameters } from '../db/errors.js';

// Secrets never reach the log: auth headers and cookies are censored by path, and the `token` query parameter
// of event-stream URLs (EventSource cannot send headers) is masked by the request serializer, in any encoding.

const REDACTED = '[redacted]';

export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  'token',
  '*.password',
  '*.token',
  '*.currentPassword',
  '*.newPassword',
];

/** Percent-decodes `%XX` byte by byte until nothing changes (a name may be encoded twice); '+' is a space. */
function decodeParamName(raw: string): string {
  let name = raw.replace(/\+/g, ' ');
  for (let round = 0; round < 4; round++) {
    const next = name.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === name) break;
    name = next;
  }
  return name.toLowerCase();
}

/** Session JWTs and access tokens have recognisable shapes: masked wherever they sit in a URL. */
const TOKEN_SHAPES = /eyJ[\w-]*\.[\w-]+\.[\w-]+|pstn_[0-9A-Za-z]{42}/g;

/**
 * Masks every query parameter whose name, once decoded and lower-cased, contains "token" (`?token=`, `?TOKEN=`,
 * `?%74oken=`, repeated ones; `&` and `;` both separate), and anything shaped like a session or access token.
 * Decoding first matters: the server's query parser decodes names, so `?%74oken=` authenticates like `?token=`.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  const masked =
    start < 0
      ? url
      : url.slice(0, start + 1) +
        url.slice(start + 1).replace(/[^&;]+/g, (pair) => {
          const name = pair.split('=', 1)[0] ?? '';
          return decodeParamName(name).includes('token') ? `${name}=${REDACTED}` : pair;
        });
  return masked.replace(TOKEN_SHAPES, REDACTED);
}

/** A request in the log: method, URL with its tokens masked, client address (Fastify's `ip`, via trusted proxies). */
function serializeRequest(req: IncomingMessage & { ip?: string }) {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a serializer must not throw on a socketless request
  return { method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip ?? req.socket?.remoteAddress };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: redactedPaths, censor: REDACTED },
    // A failed statement's parameters (hashes, ciphertexts) stay out of logged errors (db/errors.ts).
    serializers: {
      req: serializeRequest,
      err: (error: unknown) => pino.stdSerializers.err(withoutQueryParameters(error) as Error),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * One line per request, written when its answer is done (as pino-http does): `reqId`, the request (method, URL with
 * its tokens masked, client address), the status and `responseTime` in ms. Fastify's own controller writes two lines
 * ("incoming request" with the URL, "request completed" with the status). The line holds nothing but those fields,
 * each from a serializer here or a number, so it is written by a child of the logger without the redaction pass,
 * which walks every line's fields for the paths above and could never find anything here. Together the request log
 * cost ~25-30 µs of a request's CPU with two lines, ~17-19 µs with this one (bench/README.md, api.ts). An answer
 * that fails while it is written is logged at `error` with its error, through the redaction; errors a handler meets
 * are logged by the error handler with the request's `reqId`, as before; a request whose client goes away first gets
 * its line then (`logClosedRequests`).
 */
class OneLinePerRequest extends LogController {
  readonly #lines: Logger;

  constructor(logger: Logger) {
    super();
    // Its own serializers, whatever the logger's: the line's two objects are written as these make them.
    this.#lines = logger.child(
      {},
      {
        redact: { paths: [] },
        serializers: { req: serializeRequest, res: (res: FastifyReply) => ({ statusCode: res.statusCode }) },
      },
    );
  }

  override incomingRequest(): void {
    // Written with the answer.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    this.#lines.info(
      { [this.requestIdLogLabel]: request.id, req: request, res: reply, responseTime: reply.elapsedTime },
      'request completed',
    );
  }
}

/** What `Fastify(…)` takes as `logController` to write `logger`'s request log: one line per request. */
export const requestLogController = (logger: Logger): LogController => new OneLinePerRequest(logger);

/**
 * A request whose client left before its answer was done (an event stream the browser closed, a call given up) has
 * no finished answer to log: its one line is written when the client goes.
 */
export function logClosedRequests(app: FastifyInstance): void {
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info({ req: request }, 'request closed by the client');
    done();
  });
}
