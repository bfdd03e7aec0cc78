import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  describeMessage,
  errorCodeForStatus,
  toValidationError,
  validationErrorBody,
  type ErrorCode,
} from '@postern/contract';
import { z } from 'zod';
import { AppError, statusOf } from '../errors.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/errors.js';

// The one place errors become HTTP answers (STYLE.md §4): 400/401/403/404/429 `{ message, code }`, 422
// `{ message, code: 'validation', errors: { body: [{ field, message }] } }`, 5xx a generic message (details only in
// the log). The spec's fields stay as they were; `code` is the stable part clients branch on. Each message also
// carries its message code and values (`messageCode`/`params`, a field's `code`/`params`: contract message-codes.ts)
// when it has one, for the console to say it in the operator's language.

/** `{ message, code }` with the message's code and values, when it has one. */
function messageBody(message: string, code: ErrorCode) {
  const described = describeMessage(message);
  return described
    ? { message, code, messageCode: described.code, ...(described.params ? { params: described.params } : {}) }
    : { message, code };
}

function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  void reply.headers(error.headers);
  if (error.code === 'validation') {
    return reply.code(422).send({ ...validationErrorBody(error.fields), message: error.message });
  }
  return reply.code(statusOf[error.code]).send(messageBody(error.message, error.code));
}

export type HandledError = FastifyError | AppError | z.ZodError;

/** The one mapping from an error to an answer; plugins with their own handler (the agent API) end here too. */
export function sendError(error: HandledError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) {
    if (error.code === 'internal') request.log.error({ err: error }, 'internal error');
    return sendAppError(reply, error);
  }
  if (error instanceof z.ZodError) {
    // A malformed id in the path names no resource: that is a 404, not a form error.
    if ((error as { validationContext?: string }).validationContext === 'params') {
      return reply.code(404).send(messageBody('Not found', 'not_found'));
    }
    return reply.code(422).send(toValidationError(error));
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'the database does not answer');
    return reply.code(503).send(messageBody(DATABASE_UNAVAILABLE_MESSAGE, 'database_unavailable'));
  }
  const status = error.statusCode ?? 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(messageBody('Internal Server Error', 'internal'));
  }
  // Fastify's own client errors: malformed JSON, body too large, unsupported media type, ...
  return reply.code(status).send(messageBody(error.message, errorCodeForStatus(status)));
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(sendError);
}
