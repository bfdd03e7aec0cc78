import {
  ACME_DIRECTORY_PRESETS,
  AcmeCaCreateSchema,
  AcmeCaUpdateSchema,
  toFieldErrors,
  type AcmeCa,
  type AcmeCaCreate,
  type AcmeCaUpdate,
} from '@postern/contract';
import { z } from 'zod';
import { t } from '../../i18n/i18n';

// The certificate authority form (docs/api.md "Certificates"): a well-known directory or any URL, external account
// binding for the CAs that need it, and whether it is the gateway's default. The EAB HMAC key is write-only.

export const CUSTOM_PRESET = 'custom';

/** The preset choices (the CAs' own names, then "another URL" in the language of this render). */
export const presetOptions = () => [
  ...ACME_DIRECTORY_PRESETS.map((preset) => ({ value: preset.key, label: preset.name })),
  { value: CUSTOM_PRESET, label: t('certs.ca.custom') },
];

export type AcmeCaFormValues = {
  preset: string;
  name: string;
  directoryUrl: string;
  email: string;
  eabKeyId: string;
  eabHmacKey: string;
  isDefault: boolean;
};

export function presetOf(url: string): string {
  return ACME_DIRECTORY_PRESETS.find((preset) => preset.url === url)?.key ?? CUSTOM_PRESET;
}

/** Whether the form shows the external account binding: the preset needs it, or any other directory may. */
export function showsEab(values: Pick<AcmeCaFormValues, 'preset' | 'eabKeyId'>): boolean {
  const preset = ACME_DIRECTORY_PRESETS.find((entry) => entry.key === values.preset);
  return preset === undefined || preset.eab || values.eabKeyId !== '';
}

export function getInitialAcmeCaValues(ca?: AcmeCa): AcmeCaFormValues {
  const first = ACME_DIRECTORY_PRESETS[0];
  return {
    preset: ca ? presetOf(ca.directoryUrl) : first.key,
    name: ca?.name ?? first.name,
    directoryUrl: ca?.directoryUrl ?? first.url,
    email: ca?.email ?? '',
    eabKeyId: ca?.eabKeyId ?? '',
    eabHmacKey: '',
    isDefault: ca?.isDefault ?? false,
  };
}

/** The patch a preset choice applies: its name and URL (a custom one keeps what was typed). */
export function applyPreset(key: string): Partial<AcmeCaFormValues> {
  const preset = ACME_DIRECTORY_PRESETS.find((entry) => entry.key === key);
  return preset ? { preset: key, name: preset.name, directoryUrl: preset.url } : { preset: key };
}

/** The body: empty e-mail and key id are null; the HMAC key only when typed (an edit without it keeps it). */
export function toAcmeCaBody(values: AcmeCaFormValues, isEdit: boolean): AcmeCaCreate {
  const eabKeyId = values.eabKeyId.trim();
  return {
    name: values.name,
    directoryUrl: values.directoryUrl,
    email: values.email.trim() === '' ? null : values.email.trim(),
    eabKeyId: eabKeyId === '' ? null : eabKeyId,
    ...(values.eabHmacKey !== ''
      ? { eabHmacKey: values.eabHmacKey }
      : isEdit && eabKeyId === ''
        ? { eabHmacKey: null }
        : {}),
    isDefault: values.isDefault,
  };
}

export function makeAcmeCaFormSchema(isEdit: boolean) {
  const schema: z.ZodType<AcmeCaCreate | AcmeCaUpdate> = isEdit ? AcmeCaUpdateSchema : AcmeCaCreateSchema;
  return z
    .custom<AcmeCaFormValues>()
    .superRefine((values, ctx) => {
      const parsed = schema.safeParse(toAcmeCaBody(values, isEdit));
      if (parsed.success) return;
      for (const { field, message } of toFieldErrors(parsed.error))
        ctx.addIssue({ code: 'custom', path: [field], message });
    })
    .transform((values) => schema.parse(toAcmeCaBody(values, isEdit)));
}
