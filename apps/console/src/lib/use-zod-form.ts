import type { FieldError } from '@postern/contract';
import { toFieldErrors } from '@postern/contract';
import type { SubmitEvent } from 'react';
import { useCallback, useLayoutEffect, useRef, useState } from 'react';
import type { z } from 'zod';
import { fieldErrorText } from '../i18n/error-text';
import { afterPointerRelease } from './after-pointer-release';
import { isApiError } from './api';

// Form state validated with a contract schema (the spec's "Validation rules"): a field on input and on blur, the whole
// form on submit. Cross-field rules (gatewayNetwork needs isGateway) work because every check parses the whole form and
// keeps only the messages of the field in question.

export type FormErrors = Partial<Record<string, string>>;

/** The first message per field of a failed parse, as a lookup, in the operator's language. */
export function collectErrors(schema: z.ZodType, values: unknown): FormErrors {
  const result = schema.safeParse(values);
  if (result.success) return {};
  return toErrorMap(toFieldErrors(result.error));
}

/** Field errors (the form's own or a 422's) as a lookup, each message in the operator's language (error-text.ts). */
export function toErrorMap(fieldErrors: readonly FieldError[]): FormErrors {
  return Object.fromEntries(fieldErrors.map((error) => [error.field, fieldErrorText(error)]));
}

/** The form's first control (in page order) whose field has a message: where a failed submit sends focus. */
export function focusFirstInvalid(form: HTMLFormElement | null, errors: FormErrors): void {
  if (!form) return;
  const invalid = [...form.elements].find(
    (element): element is HTMLElement =>
      element instanceof HTMLElement &&
      'name' in element &&
      Boolean(errors[String(element.name)]) &&
      !(element as HTMLInputElement).disabled,
  );
  invalid?.focus();
}

export type FieldBinding<V> = {
  name: string;
  value: V;
  error: string | undefined;
  onChange: (value: V) => void;
  onBlur: () => void;
};

export function useZodForm<TValues extends Record<string, unknown>, TSchema extends z.ZodType>(
  schema: TSchema,
  initialValues: TValues,
) {
  const [values, setValues] = useState<TValues>(initialValues);
  const [errors, setErrors] = useState<FormErrors>({});
  const [isSubmitting, setSubmitting] = useState(false);
  // The latest values for handlers created before the last render (blur right after change).
  const valuesRef = useRef(values);
  useLayoutEffect(() => {
    valuesRef.current = values;
  });
  // After a failed submit, focus goes to the first invalid field once its message is rendered (WCAG 3.3.1), never
  // stays on Save or falls to the page body.
  const submittedForm = useRef<HTMLFormElement | null>(null);
  const isFocusPending = useRef(false);
  useLayoutEffect(() => {
    if (!isFocusPending.current) return;
    isFocusPending.current = false;
    focusFirstInvalid(submittedForm.current, errors);
  }, [errors]);
  const showSubmitErrors = useCallback((next: FormErrors) => {
    isFocusPending.current = true;
    setErrors(next);
  }, []);

  const validateField = useCallback(
    (name: string, nextValues: TValues) => {
      const message = collectErrors(schema, nextValues)[name];
      setErrors((current) => ({ ...current, [name]: message }));
    },
    [schema],
  );

  const setValue = useCallback(
    <K extends keyof TValues & string>(name: K, value: TValues[K]) => {
      const next = { ...valuesRef.current, [name]: value };
      valuesRef.current = next;
      setValues(next);
      validateField(name, next);
    },
    [validateField],
  );

  /** Sets several values at once without validating them (e.g. clearing a dependent field). */
  const patchValues = useCallback((patch: Partial<TValues>) => {
    const next = { ...valuesRef.current, ...patch };
    valuesRef.current = next;
    setValues(next);
  }, []);

  const touch = useCallback((name: string) => validateField(name, valuesRef.current), [validateField]);

  const field = <K extends keyof TValues & string>(name: K): FieldBinding<TValues[K]> => ({
    name,
    value: values[name],
    error: errors[name],
    onChange: (value) => setValue(name, value),
    // Not under a pressed pointer: the message would move the control being clicked (after-pointer-release.ts).
    onBlur: () => afterPointerRelease(() => touch(name)),
  });

  const reset = useCallback((next: TValues) => {
    valuesRef.current = next;
    setValues(next);
    setErrors({});
  }, []);

  const setServerErrors = useCallback((fieldErrors: readonly FieldError[]) => setErrors(toErrorMap(fieldErrors)), []);

  /** Validates everything; on success runs `onValid`, mapping a 422 onto the fields and logging other failures. */
  const handleSubmit =
    (onValid: (data: z.output<TSchema>) => Promise<void> | void) =>
    async (event?: SubmitEvent): Promise<void> => {
      event?.preventDefault();
      submittedForm.current = event?.currentTarget instanceof HTMLFormElement ? event.currentTarget : null;
      const result = schema.safeParse(valuesRef.current);
      if (!result.success) {
        showSubmitErrors(toErrorMap(toFieldErrors(result.error)));
        return;
      }
      setErrors({});
      setSubmitting(true);
      try {
        await onValid(result.data);
      } catch (error) {
        if (isApiError(error) && error.status === 422) showSubmitErrors(toErrorMap(error.fieldErrors));
        else console.error('form submit failed', error);
      } finally {
        setSubmitting(false);
      }
    };

  return { values, errors, isSubmitting, field, setValue, patchValues, touch, reset, setServerErrors, handleSubmit };
}
