import {
  ApiError,
  VALIDATION_FAILED_MESSAGE,
  type AccessPolicy,
  type FieldError,
  type ServiceAccessUpdate,
} from '@postern/contract';
import { useCallback, useLayoutEffect, useRef, useState } from 'react';
import { afterPointerRelease } from '../../lib/after-pointer-release';
import { isApiError, isStoredButNotAppliedError } from '../../lib/api';
import {
  isAccessChanged,
  isAccessField,
  toAccessBody,
  validateAccessForm,
  type AccessFieldErrors,
  type AccessFormContext,
  type AccessFormValues,
  type AccessTargetKind,
} from './access-form-rules';

// The state of an Access section inside a domain or service form: its values, their messages (on input and blur, as
// the spec's forms), and the save that runs after the form's own. A failed check or a 422 is thrown as a 422 so the
// form's own submit handling focuses the first field in error (the section's fields carry the request's names).

/** What the section edits, once loaded: the stored policy as form values. */
export type LoadedAccess =
  { status: 'loading' } | { status: 'error' } | { status: 'ready'; values: AccessFormValues; isPasswordSet: boolean };

export type AccessDraft = {
  kind: AccessTargetKind;
  status: LoadedAccess['status'];
  values: AccessFormValues;
  errors: AccessFieldErrors;
  context: AccessFormContext;
  setValue: <K extends keyof AccessFormValues>(name: K, value: AccessFormValues[K]) => void;
  touch: (name: keyof AccessFormValues) => void;
  /** Shows every message; throws a 422 (the form focuses its field) when one is shown. */
  assertValid: () => void;
  /** Whether saving would send anything. */
  isChanged: () => boolean;
  /**
   * Sends the policy when it changed; a 422 lands on the section's fields and is thrown on. Nothing changes in the
   * section: once the whole save is through, `commit` makes what was sent the new starting point.
   */
  persist: (send: (body: ServiceAccessUpdate) => Promise<{ passwordSet: boolean }>) => Promise<Committed>;
  /** Services: the policy the service inherits when it has none of its own (null: none to show). */
  inherited?: AccessPolicy | null;
};

/** Makes what `persist` sent the section's new starting point (the password is set or gone, never shown again). */
export type Committed = () => void;

const fieldErrorsOf = (errors: AccessFieldErrors): FieldError[] =>
  Object.entries(errors).flatMap(([field, message]) => (message ? [{ field, message }] : []));

/** A failed check, shaped as the server's 422, so a form's submit handler treats both alike. */
export const validationFailure = (errors: AccessFieldErrors): ApiError =>
  new ApiError(422, VALIDATION_FAILED_MESSAGE, {
    serverMessage: VALIDATION_FAILED_MESSAGE,
    code: 'validation',
    fieldErrors: fieldErrorsOf(errors),
  });

/** A server 422's messages on the section's fields; one naming another field lands on the mode. */
function accessErrorsOf(fieldErrors: readonly FieldError[]): AccessFieldErrors {
  const errors: AccessFieldErrors = {};
  for (const { field, message } of fieldErrors) {
    const name = isAccessField(field) ? field : 'mode';
    errors[name] ??= message;
  }
  return errors;
}

export function useAccessDraftCore(
  kind: AccessTargetKind,
  loaded: LoadedAccess,
  hasDomain: boolean,
  placeholder: AccessFormValues,
): Omit<AccessDraft, 'inherited'> {
  // Values follow the stored policy until it has loaded; from then on they are the operator's.
  const [draft, setDraft] = useState<{ values: AccessFormValues; initial: AccessFormValues } | null>(null);
  const [isPasswordSet, setPasswordSet] = useState(false);
  if (draft === null && loaded.status === 'ready') {
    setDraft({ values: loaded.values, initial: loaded.values });
    setPasswordSet(loaded.isPasswordSet);
  }
  const [errors, setErrors] = useState<AccessFieldErrors>({});
  const values = draft?.values ?? (loaded.status === 'ready' ? loaded.values : placeholder);
  const context: AccessFormContext = { kind, isPasswordSet, hasDomain };

  // The latest state for handlers made before the last render (blur right after change, the save after a submit).
  const latest = useRef({ values, initial: draft?.initial ?? values, context, status: loaded.status });
  useLayoutEffect(() => {
    latest.current = { values, initial: draft?.initial ?? values, context, status: loaded.status };
  });

  /** Messages for `names` and for every field showing one (the whole-policy rules move as other fields change). */
  const revalidate = useCallback((next: AccessFormValues, names: readonly (keyof AccessFormValues)[]) => {
    const found = validateAccessForm(next, latest.current.context);
    setErrors((current) => {
      const result: AccessFieldErrors = {};
      for (const key of new Set([...names, ...(Object.keys(current) as (keyof AccessFormValues)[])])) {
        const message = found[key];
        if (message !== undefined && (names.includes(key) || current[key] !== undefined)) result[key] = message;
      }
      return result;
    });
  }, []);

  const setValue = useCallback(
    <K extends keyof AccessFormValues>(name: K, value: AccessFormValues[K]) => {
      const next = { ...latest.current.values, [name]: value };
      latest.current = { ...latest.current, values: next };
      setDraft((current) => (current ? { ...current, values: next } : current));
      revalidate(next, [name]);
    },
    [revalidate],
  );

  const touch = useCallback(
    (name: keyof AccessFormValues) => afterPointerRelease(() => revalidate(latest.current.values, [name])),
    [revalidate],
  );

  const assertValid = useCallback(() => {
    if (latest.current.status !== 'ready') return;
    const found = validateAccessForm(latest.current.values, latest.current.context);
    setErrors(found);
    if (Object.keys(found).length > 0) throw validationFailure(found);
  }, []);

  const isChanged = useCallback(
    () => latest.current.status === 'ready' && isAccessChanged(latest.current.values, latest.current.initial),
    [],
  );

  const persist = useCallback(
    async (send: (body: ServiceAccessUpdate) => Promise<{ passwordSet: boolean }>): Promise<Committed> => {
      if (!isChanged()) return () => undefined;
      const sent = latest.current.values;
      let saved: { passwordSet: boolean };
      try {
        saved = await send(toAccessBody(sent));
      } catch (error) {
        const isStored = isStoredButNotAppliedError(error);
        if (!isStored && isApiError(error) && error.status === 422) {
          const found = accessErrorsOf(error.fieldErrors);
          setErrors(found);
          // Rethrown with the section's field names, so the form focuses the right one.
          throw validationFailure(found);
        }
        throw error;
      }
      return () => {
        const settled: AccessFormValues = { ...sent, passwordAction: 'keep', password: '' };
        latest.current = { ...latest.current, values: settled, initial: settled };
        setDraft({ values: settled, initial: settled });
        setPasswordSet(saved.passwordSet);
      };
    },
    [isChanged],
  );

  return { kind, status: loaded.status, values, errors, context, setValue, touch, assertValid, isChanged, persist };
}
