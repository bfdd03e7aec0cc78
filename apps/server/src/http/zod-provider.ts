import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { responseSerializer } from './response-serializer.js';

// Route schemas are the contract's zod schemas (operation.ts registers them): the same object validates the request,
// types the handler and serialises the response (only the keys it names are written, so no column can leak by
// accident: response-serializer.ts).

const isZodSchema = (schema: unknown): schema is z.ZodType => schema instanceof z.ZodType;

export function useZodCompilers(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (!isZodSchema(schema)) throw new Error(`route schema for ${String(httpPart)} must be a zod schema`);
    return (data: unknown) => {
      // A POST without a body means "no fields", so each required field reports 'This field is required'.
      const input = httpPart === 'body' && (data === undefined || data === null) ? {} : data;
      const result = schema.safeParse(input);
      return result.success ? { value: result.data } : { error: result.error };
    };
  });
  app.setSerializerCompiler(({ schema }) => {
    if (!isZodSchema(schema)) throw new Error('response schema must be a zod schema');
    return responseSerializer(schema);
  });
}
