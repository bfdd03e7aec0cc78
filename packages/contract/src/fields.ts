import { z } from 'zod';
import {
  hostBitsMessage,
  maxLengthMessage,
  maxMessage,
  messages,
  minMessage,
  oneOfMessage,
  ruleMessages,
} from './messages.js';
import { cidrNetwork } from './ipv4.js';
import { isBackendHost, isDomainName, isDomainOrWildcard } from './host-names.js';
import {
  isIPv4,
  isIPv4Cidr,
  isIpOrCidr,
  hasDotEndedSegment,
  isPathLocationSyntax,
  isPrintableAscii,
} from './validators.js';

// Field builders with the spec's messages. Semantics follow the reference product's validator: a missing value
// is 'required', an empty string 'not allowed to be empty', a value of the wrong kind names the kind.

const isMissing = (input: unknown): boolean => input === undefined || input === null;

// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** A required, trimmed, non-empty string of at most `max` characters, with no control characters. */
export const requiredText = (max: number) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.string) })
    .trim()
    .min(1, messages.empty)
    .max(max, maxLengthMessage(max))
    .refine((value) => !CONTROL_CHARACTERS.test(value), ruleMessages.controlCharacters);

/** '' and null both mean "no value"; normalised to null. */
const emptyToNull = (value: unknown): unknown => (value === '' ? null : value);

/** An optional value that may be sent as null or '' (normalised to null). */
export const optionalNullable = <T extends z.ZodType>(schema: T) =>
  z.preprocess(emptyToNull, schema.nullable().optional());

// Host names are checked for ASCII before they are lower-cased (see isPrintableAscii).
export const domainName = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : messages.domain) })
    .trim()
    .refine(isPrintableAscii, { message: messages.domain, abort: true })
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isDomainName, messages.domain);

/** A domain entry's name or a web service's domain: a domain, or a wildcard domain (`*.example.com`). */
export const domainOrWildcard = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : messages.domain) })
    .trim()
    .refine(isPrintableAscii, { message: messages.domain, abort: true })
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isDomainOrWildcard, messages.domain);

export const ipv4Address = () =>
  z
    .string({ error: () => ruleMessages.ipv4 })
    .trim()
    .refine(isIPv4, ruleMessages.ipv4);

/**
 * `10.0.0.5/8` is refused rather than silently read as `10.0.0.0/8`: the operator may have meant the host
 * (`/32`) or the network, and only they know which. The message names the network.
 */
function refuseHostBits(value: string, ctx: z.RefinementCtx): void {
  if (!isIPv4Cidr(value)) return;
  const network = cidrNetwork(value);
  if (network !== value) ctx.addIssue({ code: 'custom', message: hostBitsMessage(value, network) });
}

export const ipv4Cidr = () =>
  z
    .string({ error: () => ruleMessages.cidr })
    .trim()
    .refine(isIPv4Cidr, { message: ruleMessages.cidr, abort: true })
    .superRefine(refuseHostBits);

export const backendHost = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.host) })
    .trim()
    .refine(isPrintableAscii, { message: ruleMessages.host, abort: true })
    .toLowerCase()
    .min(1, messages.empty)
    .refine(isBackendHost, ruleMessages.host);

export const pathLocation = () =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.path) })
    .trim()
    .refine(isPathLocationSyntax, { message: ruleMessages.path, abort: true })
    .refine((value) => !hasDotEndedSegment(value), ruleMessages.pathDotEnd);

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

/**
 * A resource id: a positive integer, or its plain decimal text (`1.0`, `01`, `+1`, ` 1`, `1e0` are not ids).
 * Path parameters arrive as text; a malformed one names no resource (the server answers 404).
 */
export const idValue = () =>
  z.preprocess(
    (value) => (typeof value === 'string' && /^[1-9]\d{0,15}$/.test(value) ? Number(value) : value),
    z
      .number({ error: (iss) => (isMissing(iss.input) ? messages.required : messages.number) })
      .int(messages.integer)
      .min(1, minMessage(1))
      .max(Number.MAX_SAFE_INTEGER, maxMessage(Number.MAX_SAFE_INTEGER)),
  );

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (iss) => (isMissing(iss.input) ? messages.required : oneOfMessage(values)) });

export const flag = () => z.boolean({ error: () => ruleMessages.boolean });

/** A list of IPs/CIDRs for allow/deny, at most 100 entries, de-duplicated. */
export const ipList = () =>
  z
    .array(
      z
        .string({ error: () => ruleMessages.ipOrCidr })
        .trim()
        .refine(isIpOrCidr, { message: ruleMessages.ipOrCidr, abort: true })
        .superRefine(refuseHostBits),
      {
        error: () => messages.array,
      },
    )
    .max(100, maxMessage(100))
    .transform((list) => [...new Set(list)]);
