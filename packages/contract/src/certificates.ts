import { z } from 'zod';
import { CertificateSchema, SslModeSchema } from './entities.js';
import { certificateMessages } from './certificate-messages.js';
import { backendHost, domainName, flag, integerIn, oneOf, optionalNullable, port, requiredText } from './fields.js';
import { limits } from './constants.js';
import { messages, maxLengthMessage, ruleMessages } from './messages.js';

// Certificates for real setups (docs/api.md "Certificates"): DNS providers that answer DNS-01 challenges, the ACME
// certificate authorities a domain may use, the certificates view and an operator's own certificate. Secrets (a TSIG
// key, an API token, an EAB HMAC key, a private key) are write-only: no answer carries them.

export { certificateMessages } from './certificate-messages.js';

export const DNS_PROVIDER_KINDS = ['rfc2136', 'cloudflare', 'route53', 'acme-dns'] as const;
export type DnsProviderKind = (typeof DNS_PROVIDER_KINDS)[number];
export const TSIG_ALGORITHMS = ['hmac-sha256', 'hmac-sha384', 'hmac-sha512', 'hmac-sha224', 'hmac-sha1'] as const;

/** The well-known ACME directories the console offers; any other https URL works too. */
export const ACME_DIRECTORY_PRESETS = [
  { key: 'letsencrypt', name: "Let's Encrypt", url: 'https://acme-v02.api.letsencrypt.org/directory', eab: false },
  {
    key: 'letsencrypt-staging',
    name: "Let's Encrypt (staging)",
    url: 'https://acme-staging-v02.api.letsencrypt.org/directory',
    eab: false,
  },
  { key: 'zerossl', name: 'ZeroSSL', url: 'https://acme.zerossl.com/v2/DV90', eab: true },
  { key: 'google', name: 'Google Trust Services', url: 'https://dv.acme-v02.api.pki.goog/directory', eab: true },
] as const;

/** How long the gateway waits for a challenge record to reach every authoritative server, by default (seconds). */
export const DEFAULT_PROPAGATION_TIMEOUT_SECONDS = 120;

const isMissing = (input: unknown): boolean => input === undefined || input === null;

/** A text matching `re`, with `message` for anything else. */
const pattern = (re: RegExp, message: string, max = 255) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : message) })
    .trim()
    .min(1, messages.empty)
    .max(max, maxLengthMessage(max))
    .regex(re, message);

const secret = (max: number) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : ruleMessages.string) })
    .min(1, messages.empty)
    .max(max, maxLengthMessage(max))
    // Printable ASCII only: it is handed to nsupdate and HTTP headers, where a line break would be a new command.
    .regex(/^[\x21-\x7e]+$/, 'This field must be printable ASCII without spaces');

const httpUrl = (message: string) =>
  z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : message) })
    .trim()
    .max(2048, maxLengthMessage(2048))
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
      } catch {
        return false;
      }
    }, message);

const dnsProviderFields = {
  name: requiredText(limits.nameMax),
  kind: oneOf(DNS_PROVIDER_KINDS),
  /** rfc2136: the primary server that takes the updates (an address or a name) and its port (53). */
  server: optionalNullable(backendHost()),
  port: optionalNullable(port()),
  /** rfc2136: the TSIG key's name and algorithm (`tsig-keygen -a hmac-sha256 NAME`). */
  keyName: optionalNullable(
    pattern(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'This field must be a key name (letters, digits, ".", "_", "-")'),
  ),
  algorithm: optionalNullable(oneOf(TSIG_ALGORITHMS)),
  /** rfc2136 and route53: the zone to update (found from the SOA records when empty). */
  zone: optionalNullable(domainName()),
  /** cloudflare: the zone id (found by name when empty). */
  zoneId: optionalNullable(pattern(/^[A-Za-z0-9]{1,64}$/, 'This field must be a zone id (letters and digits)')),
  /** route53: the access key id (its secret is `secret`), hosted zone id (found by name when empty), region. */
  accessKeyId: optionalNullable(pattern(/^[A-Z0-9]{16,128}$/, 'This field must be an AWS access key id')),
  hostedZoneId: optionalNullable(pattern(/^[A-Z0-9]{1,32}$/, 'This field must be a hosted zone id (Z…)')),
  region: optionalNullable(pattern(/^[a-z]{2}(-[a-z]+)+-\d$/, 'This field must be an AWS region (us-east-1)')),
  /** acme-dns: the server's URL, and the account's user name and subdomain (`POST /register`'s answer). */
  serverUrl: optionalNullable(httpUrl(messages.uri)),
  username: optionalNullable(pattern(/^[A-Za-z0-9-]{1,64}$/, 'This field must be an acme-dns user name')),
  subdomain: optionalNullable(pattern(/^[a-z0-9-]{1,63}$/, 'This field must be an acme-dns subdomain')),
  /**
   * The provider's one secret: the TSIG key (base64), the Cloudflare API token, the AWS secret access key, or the
   * acme-dns password. Required on create; absent on an edit keeps it. Never returned.
   */
  secret: secret(4096).optional(),
  /** Seconds to wait for the record on every authoritative server before the order fails (10-3600). */
  propagationTimeoutSeconds: optionalNullable(integerIn(10, 3600)),
};

/** The settings each kind needs (besides `secret`). */
export const DNS_PROVIDER_REQUIRED: Record<DnsProviderKind, readonly (keyof typeof dnsProviderFields)[]> = {
  rfc2136: ['server', 'keyName', 'algorithm'],
  cloudflare: [],
  route53: ['accessKeyId'],
  'acme-dns': ['serverUrl', 'username', 'subdomain'],
};

function checkKindFields(value: Record<string, unknown>, ctx: z.RefinementCtx, isCreate: boolean): void {
  const kind = value.kind as DnsProviderKind | undefined;
  if (kind === undefined) return;
  for (const field of DNS_PROVIDER_REQUIRED[kind]) {
    if (value[field] == null) ctx.addIssue({ code: 'custom', path: [field], message: messages.required });
  }
  if (isCreate && value.secret === undefined) {
    ctx.addIssue({ code: 'custom', path: ['secret'], message: messages.required });
  }
}

export const DnsProviderCreateSchema = z
  .object(dnsProviderFields)
  .superRefine((value, ctx) => checkKindFields(value, ctx, true));
export type DnsProviderCreate = z.infer<typeof DnsProviderCreateSchema>;

/** An edit: the kind stays; absent fields keep their value. */
export const DnsProviderUpdateSchema = z
  .object({ ...dnsProviderFields, name: dnsProviderFields.name.optional() })
  .omit({
    kind: true,
  });
export type DnsProviderUpdate = z.infer<typeof DnsProviderUpdateSchema>;

export const DnsProviderSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(DNS_PROVIDER_KINDS),
  server: z.string().nullable(),
  port: z.number().int().nullable(),
  keyName: z.string().nullable(),
  algorithm: z.string().nullable(),
  zone: z.string().nullable(),
  zoneId: z.string().nullable(),
  accessKeyId: z.string().nullable(),
  hostedZoneId: z.string().nullable(),
  region: z.string().nullable(),
  serverUrl: z.string().nullable(),
  username: z.string().nullable(),
  subdomain: z.string().nullable(),
  /** Whether the secret is stored (it is never returned). */
  hasSecret: z.boolean(),
  propagationTimeoutSeconds: z.number().int(),
  /** Domains using it. */
  domains: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DnsProvider = z.infer<typeof DnsProviderSchema>;

const acmeCaFields = {
  name: requiredText(limits.nameMax),
  directoryUrl: httpUrl(messages.uri),
  /** Contact for the CA's expiry notices; absent: none (or the gateway's POSTERN_ACME_EMAIL). */
  email: optionalNullable(z.email({ error: () => messages.email })),
  /** External account binding (ZeroSSL, Google Trust Services): the key id and the base64url HMAC key. */
  eabKeyId: optionalNullable(pattern(/^[\x21-\x7e]{1,256}$/, ruleMessages.string, 256)),
  /** Write-only; absent on an edit keeps it, null removes it. */
  eabHmacKey: secret(1024).nullable().optional(),
  /** The gateway's default CA (one at most): domains without a CA of their own use it. */
  isDefault: flag().optional(),
};

export const AcmeCaCreateSchema = z.object(acmeCaFields).superRefine((value, ctx) => {
  if ((value.eabKeyId == null) !== (value.eabHmacKey == null)) {
    ctx.addIssue({ code: 'custom', path: ['eabHmacKey'], message: certificateMessages.eabPair });
  }
});
export type AcmeCaCreate = z.infer<typeof AcmeCaCreateSchema>;

export const AcmeCaUpdateSchema = z.object({
  ...acmeCaFields,
  name: acmeCaFields.name.optional(),
  directoryUrl: acmeCaFields.directoryUrl.optional(),
});
export type AcmeCaUpdate = z.infer<typeof AcmeCaUpdateSchema>;

export const AcmeCaSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  directoryUrl: z.string(),
  email: z.string().nullable(),
  eabKeyId: z.string().nullable(),
  hasEabHmacKey: z.boolean(),
  isDefault: z.boolean(),
  domains: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type AcmeCa = z.infer<typeof AcmeCaSchema>;

/** How a domain's certificate is obtained. */
export const CERTIFICATE_METHODS = ['self-signed', 'http-01', 'dns-01', 'uploaded'] as const;
export type CertificateMethod = (typeof CERTIFICATE_METHODS)[number];

/** One row of the certificates view. */
export const CertificateOverviewSchema = z.object({
  domainId: z.number().int(),
  domain: z.string(),
  ssl: SslModeSchema,
  method: z.enum(CERTIFICATE_METHODS),
  /** The DNS names the certificate in use covers. */
  names: z.array(z.string()),
  /** The CA that issues it (certbot), by name; null: the gateway's default. */
  caName: z.string().nullable(),
  dnsProviderName: z.string().nullable(),
  certificate: CertificateSchema.nullable(),
});
export type CertificateOverview = z.infer<typeof CertificateOverviewSchema>;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PEM_KEY = /-----BEGIN (RSA |EC )?PRIVATE KEY-----/;

/** The operator's own certificate: the chain (the domain's certificate first) and its unencrypted private key. */
export const CertificateUploadSchema = z.object({
  certificate: z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : certificateMessages.certificatePem) })
    .max(65_536, maxLengthMessage(65_536))
    .regex(PEM_CERTIFICATE, certificateMessages.certificatePem),
  privateKey: z
    .string({ error: (iss) => (isMissing(iss.input) ? messages.required : certificateMessages.privateKeyPem) })
    .max(16_384, maxLengthMessage(16_384))
    .regex(PEM_KEY, certificateMessages.privateKeyPem),
});
export type CertificateUpload = z.infer<typeof CertificateUploadSchema>;
