import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * JSON bodies, where an empty body counts as "no body": clients send `Content-Type: application/json` with
 * nothing on PATCH .../enable, and that must not be a 400.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError('bad_request', 'The request body is not valid JSON'), undefined);
    }
  });
}
