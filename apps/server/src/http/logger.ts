import type { IncomingMessage } from 'node:http';
import pino, { type DestinationStream, type Logger } from 'pino';

// Secrets never reach the log: auth headers and cookies are censored by path, and the `token` query parameter
// of event-stream URLs (EventSource cannot send headers) is masked by the request serializer.

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

/** Masks the value of every `token=` parameter in a URL's query string. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, `$1${REDACTED}`);
}

function serializeRequest(req: IncomingMessage & { ip?: string }) {
  return { method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip ?? req.socket?.remoteAddress };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: redactedPaths, censor: REDACTED },
    serializers: { req: serializeRequest },
  };
  return destination ? pino(options, destination) : pino(options);
}
