import {
  accessLimits,
  accessMessages,
  DomainAccessUpdateSchema,
  messages,
  ServiceAccessUpdateSchema,
  type AccessPolicy,
  type DomainAccessUpdate,
  type ServiceAccess,
  type ServiceAccessMode,
  type ServiceAccessUpdate,
} from '@postern/contract';
import type { z } from 'zod';
import { formatNumber } from '../../i18n/format';
import { t, type MessageId } from '../../i18n/i18n';

// The pure part of the Access section (docs/ACCESS.md "The policy model"): form values from a stored policy, the
// PATCH body, whether anything changed, and the checks the server runs on a whole policy, so the form says them
// before sending. The password is write-only: the form knows only whether one is set.

export type AccessTargetKind = 'domain' | 'service';

/** keep: leave the stored password (or none) as it is; set: the typed one replaces it; remove: no password. */
export type PasswordAction = 'keep' | 'set' | 'remove';

export type AccessFormValues = {
  /** A domain is public or protected; a service may also inherit its domain's policy. */
  mode: ServiceAccessMode;
  /** '' : no single sign-on; else the provider's id as text (the select's value). */
  providerId: string;
  allowEmails: string[];
  allowEmailDomains: string[];
  allowGroups: string[];
  passwordAction: PasswordAction;
  password: string;
  shareLinks: boolean;
  bypassPaths: string[];
  bypassNetworks: string[];
  /** Seconds as text (the select's value). */
  sessionSeconds: string;
};

export type AccessFormContext = {
  kind: AccessTargetKind;
  /** Whether the stored policy has a password (the form never sees it). */
  isPasswordSet: boolean;
  /** Services only: whether the service (as the form now reads) has a domain; policies need one. */
  hasDomain: boolean;
};

export type AccessFieldErrors = Partial<Record<keyof AccessFormValues, string>>;

/** The fields a 422 from the access calls can name (the request's own field names). */
export const ACCESS_FIELDS = [
  'mode',
  'providerId',
  'allowEmails',
  'allowEmailDomains',
  'allowGroups',
  'password',
  'shareLinks',
  'bypassPaths',
  'bypassNetworks',
  'sessionSeconds',
] as const;

export const isAccessField = (field: string): field is (typeof ACCESS_FIELDS)[number] =>
  (ACCESS_FIELDS as readonly string[]).includes(field);

const emptyValues = (mode: ServiceAccessMode): AccessFormValues => ({
  mode,
  providerId: '',
  allowEmails: [],
  allowEmailDomains: [],
  allowGroups: [],
  passwordAction: 'keep',
  password: '',
  shareLinks: false,
  bypassPaths: [],
  bypassNetworks: [],
  sessionSeconds: String(accessLimits.sessionSecondsDefault),
});

function valuesOf(policy: AccessPolicy, mode: ServiceAccessMode): AccessFormValues {
  return {
    ...emptyValues(mode),
    providerId: policy.providerId === null ? '' : String(policy.providerId),
    allowEmails: [...policy.allowEmails],
    allowEmailDomains: [...policy.allowEmailDomains],
    allowGroups: [...policy.allowGroups],
    shareLinks: policy.shareLinks,
    bypassPaths: [...policy.bypassPaths],
    bypassNetworks: [...policy.bypassNetworks],
    sessionSeconds: String(policy.sessionSeconds),
  };
}

/** A domain's form values: its policy (public when it has none, or when the domain is new). */
export const domainAccessValues = (policy: AccessPolicy | null): AccessFormValues =>
  policy ? valuesOf(policy, policy.mode) : emptyValues('public');

/** A service's form values: its own policy, or inherit (also for a new service). */
export const serviceAccessValues = (access: ServiceAccess | null): AccessFormValues =>
  access?.own ? valuesOf(access.own, access.mode) : emptyValues('inherit');

/** Whether the policy the form describes will have a password after saving. */
export function hasPasswordAfterSave(values: AccessFormValues, context: AccessFormContext): boolean {
  if (values.passwordAction === 'set') return true;
  if (values.passwordAction === 'remove') return false;
  return context.isPasswordSet;
}

/**
 * The PATCH body. Inherit and public send the mode alone: the server keeps the other stored fields (inherit refuses
 * them), so switching back to protected finds them again. The password is sent only when set or removed.
 */
export function toAccessBody(values: AccessFormValues): ServiceAccessUpdate {
  if (values.mode !== 'protected') return { mode: values.mode };
  return {
    mode: 'protected',
    providerId: values.providerId === '' ? null : Number(values.providerId),
    allowEmails: values.allowEmails,
    allowEmailDomains: values.allowEmailDomains,
    allowGroups: values.allowGroups,
    ...(values.passwordAction === 'set' ? { password: values.password } : {}),
    ...(values.passwordAction === 'remove' ? { password: null } : {}),
    shareLinks: values.shareLinks,
    bypassPaths: values.bypassPaths,
    bypassNetworks: values.bypassNetworks,
    sessionSeconds: Number(values.sessionSeconds),
  };
}

/** Whether saving would change anything: only then is the policy sent (a new service that inherits sends nothing). */
export function isAccessChanged(values: AccessFormValues, initial: AccessFormValues): boolean {
  if (values.passwordAction !== 'keep') return true;
  return JSON.stringify(toAccessBody(values)) !== JSON.stringify(toAccessBody(initial));
}

type Issue = z.core.$ZodIssue;

/** One message per field: a list entry's message names the entry, so the operator finds the line. */
function messagesOf(issues: readonly Issue[], values: AccessFormValues): AccessFieldErrors {
  const errors: AccessFieldErrors = {};
  for (const issue of issues) {
    const [field, index] = issue.path;
    if (typeof field !== 'string' || !isAccessField(field) || errors[field] !== undefined) continue;
    const list = values[field];
    const entry = typeof index === 'number' && Array.isArray(list) ? list[index] : undefined;
    errors[field] = entry === undefined ? issue.message : `${entry}: ${issue.message}`;
  }
  return errors;
}

/**
 * Every message the form shows before sending: the request schema's (per field), then the rules the server checks
 * on the whole policy (a way in, someone on the lists when single sign-on is on, a domain for a service's policy).
 */
export function validateAccessForm(values: AccessFormValues, context: AccessFormContext): AccessFieldErrors {
  if (values.mode === 'inherit' || values.mode === 'public') return {};
  if (context.kind === 'service' && !context.hasDomain) return { mode: accessMessages.needsDomain };
  const schema = context.kind === 'domain' ? DomainAccessUpdateSchema : ServiceAccessUpdateSchema;
  const body: DomainAccessUpdate | ServiceAccessUpdate = toAccessBody(values);
  const parsed = schema.safeParse(body);
  const errors = parsed.success ? {} : messagesOf(parsed.error.issues, values);
  if (values.passwordAction === 'set' && values.password === '') errors.password = messages.required;
  const hasWayIn = values.providerId !== '' || hasPasswordAfterSave(values, context) || values.shareLinks;
  if (!hasWayIn) errors.mode ??= accessMessages.noWayIn;
  const listed = values.allowEmails.length + values.allowEmailDomains.length + values.allowGroups.length;
  if (values.providerId !== '' && listed === 0) errors.allowEmails ??= accessMessages.noAllowList;
  return errors;
}

// ---- Session length ---------------------------------------------------------------------------------------------

const UNITS: [seconds: number, id: MessageId][] = [
  [86_400, 'access.duration.day'],
  [3600, 'access.duration.hour'],
  [60, 'access.duration.minute'],
  [1, 'access.duration.second'],
];

/** 86400 → '24 hours', 604800 → '7 days', 5400 → '90 minutes': the largest unit that divides it. */
export function formatDuration(seconds: number): string {
  const [unit, id] = UNITS.find(([size]) => seconds % size === 0 && (size < 86_400 || seconds >= 86_400 * 2)) ?? [
    1,
    'access.duration.second',
  ];
  const count = seconds / unit;
  return t(id, { count, n: formatNumber(count) });
}

const SESSION_PRESETS = [300, 900, 3600, 8 * 3600, 86_400, 7 * 86_400, 30 * 86_400];

/** The session lengths offered, plus the stored one when it is none of them (set through the API). */
export function sessionOptions(current: string): { value: string; label: string }[] {
  const seconds = [...SESSION_PRESETS];
  const stored = Number(current);
  if (Number.isInteger(stored) && stored > 0 && !seconds.includes(stored)) seconds.push(stored);
  return seconds.sort((a, b) => a - b).map((value) => ({ value: String(value), label: formatDuration(value) }));
}
