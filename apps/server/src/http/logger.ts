import type { IncomingMessage } from 'node:http';
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
