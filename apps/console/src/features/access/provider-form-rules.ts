import {
  IdentityProviderCreateSchema,
  toFieldErrors,
  type IdentityProvider,
  type IdentityProviderCreate,
} from '@postern/contract';
import { z } from 'zod';

// The identity provider form (beyond the console spec; docs/ACCESS.md "OpenID Connect"). The client secret is
// write-only: an edit leaves it out unless a new one is typed, or it is removed.

export type ProviderFormValues = {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Edit only: remove the stored secret (a public client, PKCE alone). */
  removeSecret: boolean;
  /** Space- or comma-separated, as an operator copies them from a provider's documentation. */
  scopes: string;
  groupsClaim: string;
};

export const DEFAULT_SCOPES = 'openid email profile';

export function getInitialProviderValues(provider?: IdentityProvider): ProviderFormValues {
  return {
    name: provider?.name ?? '',
    issuer: provider?.issuer ?? '',
    clientId: provider?.clientId ?? '',
    clientSecret: '',
    removeSecret: false,
    scopes: provider ? provider.scopes.join(' ') : DEFAULT_SCOPES,
    groupsClaim: provider?.groupsClaim ?? 'groups',
  };
}

const splitScopes = (text: string): string[] => text.split(/[\s,]+/).filter((scope) => scope !== '');

/** The request body: an empty secret is left out (create: none; edit: keep), a removed one is null. */
export function toProviderBody(values: ProviderFormValues, isEdit: boolean): IdentityProviderCreate {
  const secret = isEdit && values.removeSecret ? null : values.clientSecret === '' ? undefined : values.clientSecret;
  return {
    name: values.name,
    issuer: values.issuer,
    clientId: values.clientId,
    ...(secret === undefined ? {} : { clientSecret: secret }),
    scopes: splitScopes(values.scopes),
    groupsClaim: values.groupsClaim,
  };
}

/**
 * A schema for `useZodForm`: checks the form values with the contract's schema, outputs the request body. The form
 * sends every field on an edit too, so the create schema checks both (its secret may be null: removed).
 */
export function makeProviderFormSchema(isEdit: boolean) {
  return z
    .custom<ProviderFormValues>()
    .superRefine((values, ctx) => {
      const parsed = IdentityProviderCreateSchema.safeParse(toProviderBody(values, isEdit));
      if (parsed.success) return;
      for (const { field, message } of toFieldErrors(parsed.error))
        ctx.addIssue({ code: 'custom', path: [field], message });
    })
    .transform((values) => IdentityProviderCreateSchema.parse(toProviderBody(values, isEdit)));
}
