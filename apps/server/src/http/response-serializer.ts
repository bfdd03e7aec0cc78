import fastJson from 'fast-json-stringify';
import { z } from 'zod';

// An API answer is written through its operation's response schema, so a column the schema does not name never
// leaves (a row spread into an answer, a secret added to a table later). zod's `parse` then `JSON.stringify` did that
// in two passes over the answer (~14-17 µs of a 10-row list, bench/README.md "api-steps.ts"); a serialiser compiled
// once from the schema's JSON Schema writes only the properties the schema names, in one pass (~3-5 µs).
//
// Compiled only where fast-json-stringify writes exactly what zod would keep: objects (closed: no other key is ever
// written), arrays, strings, numbers, booleans, enums and constants, each possibly nullable. A schema with a union,
// an intersection, a reference or anything else falls back to zod's parse: with a union, fast-json-stringify picks a
// branch by validating the value, and a value with an extra key matches no closed branch (a 500, where zod drops the
// key). Unlike zod's parse, the compiled serialiser does not check values against the schema's refinements (formats,
// patterns, ranges, an enum's members): the answer is the server's own data, and what it guards is which keys leave.

type JsonSchema = Record<string, unknown>;

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** Keywords that only refine a value: fast-json-stringify ignores them, zod checks them (see above). */
const REFINEMENTS = new Set([
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'default',
  'description',
]);

const isRecord = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `anyOf: [X, { type: 'null' }]` (zod's `.nullable()` of an enum or an object) as X with `null` among its types. */
function withNullableFolded(schema: JsonSchema): JsonSchema {
  const { anyOf, ...rest } = schema;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return schema;
  const [first, second] = anyOf as unknown[];
  const isNull = (s: unknown) => isRecord(s) && s.type === 'null' && Object.keys(s).length === 1;
  const other = isNull(second) ? first : isNull(first) ? second : undefined;
  if (!isRecord(other) || typeof other.type !== 'string') return schema;
  return { ...rest, ...other, type: [other.type, 'null'] };
}

/** The schema made plain (see above), or undefined when it is not. */
function plain(given: unknown): JsonSchema | undefined {
  if (!isRecord(given)) return undefined;
  const schema = withNullableFolded(given);
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') {
      const known = types.every(
        (type) => typeof type === 'string' && (PRIMITIVES.has(type) || type === 'object' || type === 'array'),
      );
      if (!known || types.filter((type) => type !== 'null').length !== 1) return undefined;
      out.type = value;
    } else if (REFINEMENTS.has(key)) {
      out[key] = value;
    } else if (key === 'properties' && types.includes('object') && isRecord(value)) {
      const properties: JsonSchema = {};
      for (const [name, property] of Object.entries(value)) {
        const inner = plain(property);
        if (inner === undefined) return undefined;
        properties[name] = inner;
      }
      out.properties = properties;
    } else if (key === 'required' && Array.isArray(value)) {
      out.required = value;
    } else if (key === 'additionalProperties' && value === false) {
      out.additionalProperties = false;
    } else if (key === 'items' && types.includes('array')) {
      const inner = plain(value);
      if (inner === undefined) return undefined;
      out.items = inner;
    } else return undefined;
  }
  // An object is written only with the keys it names: closed, with its properties listed.
  if (types.includes('object') && (out.additionalProperties !== false || !isRecord(out.properties))) return undefined;
  if (types.includes('array') && !isRecord(out.items)) return undefined;
  return out;
}

/**
 * A serialiser compiled from `schema` that writes only what the schema names, or undefined when the schema is not
 * one fast-json-stringify writes as zod would keep it (then: zod's parse and JSON.stringify).
 */
export function compileResponseSerializer(schema: z.ZodType): ((data: unknown) => string) | undefined {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'throw' });
  } catch {
    return undefined; // a transform, a date or another type JSON Schema cannot say
  }
  const { $schema: _draft, ...rest } = json;
  const compiled = plain(rest);
  return compiled === undefined ? undefined : fastJson(compiled as unknown as Parameters<typeof fastJson>[0]);
}

/** The answer's serialiser: compiled where it can be (above), else zod's parse (unknown keys dropped), stringified. */
export function responseSerializer(schema: z.ZodType): (data: unknown) => string {
  return compileResponseSerializer(schema) ?? ((data: unknown) => JSON.stringify(schema.parse(data)));
}
