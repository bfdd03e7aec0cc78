import type { FastifyInstance } from 'fastify';

// Every 422 the API tests provoke must give each field error a message code (contract message-codes.ts), so the
// console can say it in the operator's language: a new message without a code fails the test file that sends it
// (setup-message-codes.ts checks after each file). The API keeps the English `message` either way.

const uncoded = new Set<string>();

/** Records the field errors of the app's 422 answers that carry no `code`. */
export function watchFieldErrorCodes(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 422 || typeof payload !== 'string') return payload;
    const body = JSON.parse(payload) as { errors?: { body?: { field: string; message: string; code?: string }[] } };
    for (const entry of body.errors?.body ?? []) {
      if (entry.code === undefined) uncoded.add(`${request.method} ${request.url} ${entry.field}: ${entry.message}`);
    }
    return payload;
  });
}

/** The field errors without a code seen so far in this test file; forgets them. */
export function takeUncodedFieldErrors(): string[] {
  const seen = [...uncoded];
  uncoded.clear();
  return seen;
}
