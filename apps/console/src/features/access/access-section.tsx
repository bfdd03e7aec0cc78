import { accessLimits, type AccessPolicy, type ServiceAccess } from '@postern/contract';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef } from 'react';
import { Button } from '../../components/ui/button';
import { CheckboxField, IpListField, SelectField, TextField } from '../../components/ui/form-field';
import { allIdentityProvidersQueryOptions } from '../../queries/access';
import { sessionOptions, type AccessFormValues } from './access-form-rules';
import { describePolicy, describeSource } from './policy-summary';
import type { AccessDraft } from './use-access-draft';
import { t } from '../../i18n/i18n';

// The Access section of the domain and HTTP service forms (beyond the console spec; docs/ACCESS.md): who may open
// the published service in a browser. Its fields carry the request's names, so the form's submit handling focuses
// the first one in error, as it does for its own fields.

type ModeOption = { value: AccessFormValues['mode']; label: string; description: string };

function modeOptions(draft: AccessDraft): ModeOption[] {
  const inherited =
    draft.inherited === undefined
      ? []
      : [
          {
            value: 'inherit' as const,
            label: t('access.inherit.label'),
            description:
              draft.inherited === null || draft.inherited.mode === 'public'
                ? t('access.inherit.public')
                : t('access.inherit.policy', { policy: describePolicy(draft.inherited).join('; ') }),
          },
        ];
  return [
    ...inherited,
    { value: 'public', label: t('access.public.label'), description: t('access.public.hint') },
    { value: 'protected', label: t('access.protected.label'), description: t('access.protected.hint') },
  ];
}

/** Radio buttons for the mode, with their descriptions and the field's message (a native radio group). */
function ModeField({ draft }: { draft: AccessDraft }) {
  const id = useId();
  const error = draft.errors.mode;
  return (
    <fieldset className="flex flex-col gap-2" aria-describedby={error ? `${id}-error` : undefined}>
      <legend className="mb-1 text-sm font-medium text-gray-700 dark:text-gray-200">{t('access.who')}</legend>
      {modeOptions(draft).map((option) => (
        <div key={option.value} className="flex items-start gap-2">
          <input
            id={`${id}-${option.value}`}
            type="radio"
            name="mode"
            value={option.value}
            checked={draft.values.mode === option.value}
            onChange={() => draft.setValue('mode', option.value)}
            onBlur={() => draft.touch('mode')}
            aria-describedby={`${id}-${option.value}-description`}
            aria-invalid={error ? true : undefined}
            className="mt-0.5 size-4 accent-brand-600"
          />
          <div className="flex flex-col">
            <label htmlFor={`${id}-${option.value}`} className="text-sm text-gray-800 dark:text-gray-100">
              {option.label}
            </label>
            <p id={`${id}-${option.value}-description`} className="text-xs text-gray-500 dark:text-gray-400">
              {option.description}
            </p>
          </div>
        </div>
      ))}
      {error && (
        <p id={`${id}-error`} className="text-xs text-red-600 dark:text-red-400" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** The write-only password: set, change or remove; never shown back. */
function PasswordField({ draft }: { draft: AccessDraft }) {
  const boxRef = useRef<HTMLDivElement>(null);
  const action = draft.values.passwordAction;
  const isSet = draft.context.isPasswordSet;
  // "Set" and "Change" replace the button that had focus by the field: the operator types next.
  const hasChosen = useRef(false);
  useEffect(() => {
    if (action === 'set' && hasChosen.current) boxRef.current?.querySelector('input')?.focus();
    hasChosen.current = true;
  }, [action]);
  const statusClass = 'text-sm text-gray-700 dark:text-gray-200';

  if (action === 'set') {
    return (
      <div ref={boxRef} className="flex flex-col gap-2">
        <TextField
          label={t(isSet ? 'access.password.new' : 'access.password.label')}
          name="password"
          type="password"
          autoComplete="new-password"
          description={t('access.password.hint', { min: accessLimits.passwordMin })}
          value={draft.values.password}
          error={draft.errors.password}
          onChange={(value) => draft.setValue('password', value)}
          onBlur={() => draft.touch('password')}
        />
        <div>
          <Button
            variant="ghost"
            onClick={() => {
              draft.setValue('password', '');
              draft.setValue('passwordAction', 'keep');
            }}
          >
            {t(isSet ? 'access.password.keep' : 'access.password.none')}
          </Button>
        </div>
      </div>
    );
  }
  return (
    <div className="flex flex-col gap-1">
      <span className="text-sm font-medium text-gray-700 dark:text-gray-200">{t('access.password.label')}</span>
      <div className="flex flex-wrap items-center gap-2">
        {action === 'remove' ? (
          <>
            <span className={statusClass}>{t('access.password.removed')}</span>
            <Button variant="secondary" onClick={() => draft.setValue('passwordAction', 'keep')}>
              {t('access.undo')}
            </Button>
          </>
        ) : isSet ? (
          <>
            <span className={statusClass}>{t('access.password.isSet')}</span>
            <Button variant="secondary" onClick={() => draft.setValue('passwordAction', 'set')}>
              {t('access.password.change')}
            </Button>
            <Button variant="secondary" onClick={() => draft.setValue('passwordAction', 'remove')}>
              {t('access.password.remove')}
            </Button>
          </>
        ) : (
          <>
            <span className={statusClass}>{t('access.password.noneSet')}</span>
            <Button variant="secondary" onClick={() => draft.setValue('passwordAction', 'set')}>
              {t('access.password.set')}
            </Button>
          </>
        )}
      </div>
      {draft.errors.password && (
        <p className="text-xs text-red-600 dark:text-red-400" role="alert">
          {draft.errors.password}
        </p>
      )}
    </div>
  );
}

function providerOptions(draft: AccessDraft, providers: { id: number; name: string }[] | undefined) {
  const options = (providers ?? []).map((provider) => ({ value: String(provider.id), label: provider.name }));
  const current = draft.values.providerId;
  // The stored provider stays listed while the list loads (or if it is beyond the list's one page).
  if (current !== '' && !options.some((option) => option.value === current))
    options.push({ value: current, label: t('access.provider.fallback', { id: current }) });
  return [{ value: '', label: t('access.provider.none') }, ...options];
}

function ProtectedFields({ draft }: { draft: AccessDraft }) {
  const providers = useQuery(allIdentityProvidersQueryOptions());
  const { values, errors } = draft;
  const bind = <K extends 'allowEmails' | 'allowEmailDomains' | 'allowGroups' | 'bypassPaths' | 'bypassNetworks'>(
    name: K,
  ) => ({
    name,
    value: values[name],
    error: errors[name],
    onChange: (value: string[]) => draft.setValue(name, value),
    onBlur: () => draft.touch(name),
  });
  const hasNoProviders = providers.isSuccess && providers.data.total === 0;
  return (
    // A container: the lists sit side by side in the wide service form, one under another in the narrow domain form.
    <div className="@container flex flex-col gap-4 border-l-2 border-gray-200 pl-4 dark:border-gray-700">
      <SelectField
        label={t('access.sso')}
        name="providerId"
        options={providerOptions(draft, providers.data?.data)}
        description={t(hasNoProviders ? 'access.sso.noProviders' : 'access.sso.hint')}
        value={values.providerId}
        error={errors.providerId}
        onChange={(value) => draft.setValue('providerId', value)}
        onBlur={() => draft.touch('providerId')}
      />
      {values.providerId !== '' && (
        <div className="grid grid-cols-1 gap-4 @xl:grid-cols-3">
          <IpListField
            label={t('access.allowEmails')}
            placeholder="alice@example.com"
            description={t('access.onePerLine')}
            {...bind('allowEmails')}
          />
          <IpListField
            label={t('access.allowDomains')}
            placeholder="example.com"
            description={t('access.allowDomains.hint')}
            {...bind('allowEmailDomains')}
          />
          <IpListField
            label={t('access.allowGroups')}
            placeholder="admins"
            description={t('access.allowGroups.hint')}
            {...bind('allowGroups')}
          />
        </div>
      )}
      <PasswordField draft={draft} />
      <CheckboxField
        label={t('access.shareLinks')}
        name="shareLinks"
        description={t('access.shareLinks.hint')}
        value={values.shareLinks}
        error={errors.shareLinks}
        onChange={(checked) => draft.setValue('shareLinks', checked)}
        onBlur={() => draft.touch('shareLinks')}
      />
      <div className="grid grid-cols-1 gap-4 @xl:grid-cols-2">
        <IpListField
          label={t('access.bypassPaths')}
          placeholder="/webhook"
          description={t('access.bypassPaths.hint')}
          {...bind('bypassPaths')}
        />
        <IpListField
          label={t('access.bypassNetworks')}
          placeholder="192.168.1.0/24"
          description={t('access.bypassNetworks.hint')}
          {...bind('bypassNetworks')}
        />
      </div>
      <SelectField
        label={t('access.session')}
        name="sessionSeconds"
        description={t('access.session.hint')}
        options={sessionOptions(values.sessionSeconds)}
        value={values.sessionSeconds}
        error={errors.sessionSeconds}
        onChange={(value) => draft.setValue('sessionSeconds', value)}
        onBlur={() => draft.touch('sessionSeconds')}
      />
    </div>
  );
}

/** What nginx applies to the stored service now, and where it comes from. */
function EffectivePolicy({ access }: { access: ServiceAccess }) {
  return (
    <div
      className="rounded-md bg-gray-50 px-3 py-2 text-sm dark:bg-gray-800"
      role="group"
      aria-label={t('access.appliedNow')}
    >
      <p className="font-medium text-gray-700 dark:text-gray-200">
        {t('access.appliedNowSource', { source: describeSource(access) })}
      </p>
      <PolicyLines policy={access.effective} />
      {access.setBy === 'node' && (
        <p className="mt-1 text-xs text-gray-600 dark:text-gray-300">{t('access.setByNode')}</p>
      )}
    </div>
  );
}

export function PolicyLines({ policy }: { policy: AccessPolicy }) {
  return (
    <ul className="list-inside list-disc text-gray-600 dark:text-gray-300">
      {describePolicy(policy).map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  );
}

/** Mounted inside a domain or HTTP service form; `stored` (services) shows the policy applied now. */
export function AccessSection({ draft, stored }: { draft: AccessDraft; stored?: ServiceAccess | undefined }) {
  return (
    <fieldset className="flex flex-col gap-4 rounded-md border border-gray-200 p-4 md:col-span-2 dark:border-gray-700">
      <legend className="px-1 text-sm font-semibold">{t('access.title')}</legend>
      {draft.status === 'loading' ? (
        <p className="text-sm text-gray-500 dark:text-gray-400">{t('access.loading')}</p>
      ) : draft.status === 'error' ? (
        <p className="text-sm text-red-600 dark:text-red-400">{t('access.loadError')}</p>
      ) : (
        <>
          {stored && <EffectivePolicy access={stored} />}
          <ModeField draft={draft} />
          {draft.values.mode === 'protected' && <ProtectedFields draft={draft} />}
        </>
      )}
    </fieldset>
  );
}
