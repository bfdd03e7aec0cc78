import {
  DNS_PROVIDER_KINDS,
  DnsProviderCreateSchema,
  DnsProviderUpdateSchema,
  toFieldErrors,
  type DnsProvider,
  type DnsProviderCreate,
  type DnsProviderKind,
  type DnsProviderUpdate,
} from '@postern/contract';
import { z } from 'zod';
import type { MessageId } from '../../i18n/i18n';

// The DNS provider form (docs/api.md "Certificates"): one form for every kind, showing the settings of the kind
// chosen. The secret is write-only: an edit never shows it and sends one only when the operator chose to replace it.

export const DNS_PROVIDER_KIND_LABELS: Record<DnsProviderKind, string> = {
  rfc2136: 'RFC 2136 (BIND, PowerDNS, Knot, Technitium…)',
  cloudflare: 'Cloudflare',
  route53: 'Amazon Route 53',
  'acme-dns': 'acme-dns',
};

export const DNS_PROVIDER_KIND_OPTIONS = DNS_PROVIDER_KINDS.map((kind) => ({
  value: kind,
  label: DNS_PROVIDER_KIND_LABELS[kind],
}));

/** What the secret is called for each kind (ids: read with t() at render). */
export const SECRET_LABELS: Record<DnsProviderKind, MessageId> = {
  rfc2136: 'certs.secret.tsig',
  cloudflare: 'certs.secret.apiToken',
  route53: 'certs.secret.secretKey',
  'acme-dns': 'certs.secret.password',
};

export type TextSetting =
  | 'server'
  | 'port'
  | 'keyName'
  | 'algorithm'
  | 'zone'
  | 'zoneId'
  | 'accessKeyId'
  | 'hostedZoneId'
  | 'region'
  | 'serverUrl'
  | 'username'
  | 'subdomain'
  | 'propagationTimeoutSeconds';

/** The settings each kind shows, in form order (all but `name`, `secret` and the propagation timeout). */
export const KIND_SETTINGS: Record<DnsProviderKind, readonly TextSetting[]> = {
  rfc2136: ['server', 'port', 'keyName', 'algorithm', 'zone'],
  cloudflare: ['zoneId'],
  route53: ['accessKeyId', 'hostedZoneId', 'region', 'zone'],
  'acme-dns': ['serverUrl', 'username', 'subdomain'],
};

export type DnsProviderFormValues = { name: string; kind: DnsProviderKind; secret: string } & Record<
  TextSetting,
  string
>;

const text = (value: string | number | null | undefined): string => (value == null ? '' : String(value));

export function getInitialDnsProviderValues(provider?: DnsProvider): DnsProviderFormValues {
  return {
    name: provider?.name ?? '',
    kind: provider?.kind ?? 'rfc2136',
    server: text(provider?.server),
    port: text(provider?.port),
    keyName: text(provider?.keyName),
    algorithm: provider?.algorithm ?? 'hmac-sha256',
    zone: text(provider?.zone),
    zoneId: text(provider?.zoneId),
    accessKeyId: text(provider?.accessKeyId),
    hostedZoneId: text(provider?.hostedZoneId),
    region: text(provider?.region),
    serverUrl: text(provider?.serverUrl),
    username: text(provider?.username),
    subdomain: text(provider?.subdomain),
    propagationTimeoutSeconds: text(provider?.propagationTimeoutSeconds),
    secret: '',
  };
}

const NUMBERS: readonly TextSetting[] = ['port', 'propagationTimeoutSeconds'];

/**
 * The request body: the chosen kind's settings (empty: null, so an edit clears them), the timeout, and the secret
 * only when one was typed (a create needs it; an edit without it keeps the stored one).
 */
export function toDnsProviderBody(values: DnsProviderFormValues): DnsProviderCreate {
  const settings: Partial<Record<TextSetting, string | number | null>> = {};
  for (const key of [...KIND_SETTINGS[values.kind], 'propagationTimeoutSeconds'] as const) {
    const value = values[key].trim();
    settings[key] = value === '' ? null : NUMBERS.includes(key) && /^\d+$/.test(value) ? Number(value) : value;
  }
  return {
    name: values.name,
    kind: values.kind,
    ...settings,
    ...(values.secret === '' ? {} : { secret: values.secret }),
  } as DnsProviderCreate;
}

/** A schema for `useZodForm`: the contract's rules on the form's values (create or edit), the body as output. */
export function makeDnsProviderFormSchema(isEdit: boolean) {
  const schema: z.ZodType<DnsProviderCreate | DnsProviderUpdate> = isEdit
    ? DnsProviderUpdateSchema
    : DnsProviderCreateSchema;
  return z
    .custom<DnsProviderFormValues>()
    .superRefine((values, ctx) => {
      const body = toDnsProviderBody(values);
      const parsed = schema.safeParse(isEdit ? { ...body, kind: undefined } : body);
      if (parsed.success) return;
      for (const { field, message } of toFieldErrors(parsed.error))
        ctx.addIssue({ code: 'custom', path: [field], message });
    })
    .transform((values): DnsProviderCreate | DnsProviderUpdate => {
      const body = toDnsProviderBody(values);
      if (!isEdit) return DnsProviderCreateSchema.parse(body);
      const { kind: _kind, ...rest } = body;
      return DnsProviderUpdateSchema.parse(rest);
    });
}
