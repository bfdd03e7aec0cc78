import { z } from 'zod';
import { maxLengthMessage, maxMessage, messages, minMessage, oneOfMessage, ruleMessages } from './messages.js';
import { isBackendHost, isDomainName, isIPv4, isIPv4Cidr, isIpOrCidr, isPathLocation } from './validators.js';

// Field builders with the spec's messages. Semantics follow the reference product's validator: a missing value
// is 'required', an empty string 'not allowed to be empty', a value of the wrong kind names the kind.

const isMissing = (input: unknown): boolean => input === undefined || input === null;

/** A required, trimmed, non-empty string of at most `max` characters. */
export const requiredText = (max: number) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.string) })
    .trim()
    .min(1, messages.empty)
    .max(max, maxLengthMessage(max));

/** '' and null both mean "no value"; normalised to null. */
const emptyToNull = (value: unknown): unknown => (value === '' ? null : value);

/** An optional value that may be sent as null or '' (normalised to null). */
export const optionalNullable = <T extends z.ZodType>(schema: T) =>
  z.preprocess(emptyToNull, schema.nullable().optional());

export const domainName = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : messages.domain) })
    .trim()
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isDomainName, messages.domain);

export const ipv4Address = () =>
  z.string({ error: () => ruleMessages.ipv4 }).trim().refine(isIPv4, ruleMessages.ipv4);

export const ipv4Cidr = () =>
  z.string({ error: () => ruleMessages.cidr }).trim().refine(isIPv4Cidr, ruleMessages.cidr);

export const backendHost = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.host) })
    .trim()
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isBackendHost, ruleMessages.host);

export const pathLocation = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.path) })
    .trim()
    .refine(isPathLocation, ruleMessages.path);

export const integerIn = (min: number, max: number) =>
  z.preprocess(
    // Form inputs and query strings send numbers as text; accept a plain decimal string.
    (value) => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value),
    z
      .number({ error: (iss) => (isMissing(iss.input) ? messages.required : messages.number) })
      .refine(Number.isFinite, messages.number)
      .refine(Number.isInteger, messages.integer)
      .refine((n) => n >= min, minMessage(min))
      .refine((n) => n <= max, maxMessage(max)),
  );

export const port = () => integerIn(1, 65535);

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (iss) => (isMissing(iss.input) ? messages.required : oneOfMessage(values)) });

export const flag = () => z.boolean({ error: () => ruleMessages.boolean });

/** A list of IPs/CIDRs for allow/deny, at most 100 entries, de-duplicated. */
export const ipList = () =>
  z
    .array(z.string({ error: () => ruleMessages.ipOrCidr }).trim().refine(isIpOrCidr, ruleMessages.ipOrCidr), {
      error: () => messages.array,
    })
    .max(100, maxMessage(100))
    .transform((list) => [...new Set(list)]);
