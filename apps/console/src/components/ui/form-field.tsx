import { timing } from '@postern/contract';
import type { InputHTMLAttributes, KeyboardEvent, ReactNode } from 'react';
import { useEffect, useId, useRef, useState } from 'react';
import { t } from '../../i18n/i18n';

// Form inputs that show a label, an optional description and the field's error. Their props match
// `useZodForm().field(name)`, so `<TextField label="Name" {...form.field('name')} />` wires everything.

const inputClasses =
  'block w-full rounded-md border bg-white px-3 py-2 text-sm shadow-xs focus:outline-2 focus:outline-offset-0 disabled:cursor-not-allowed disabled:bg-gray-100 disabled:text-gray-500 dark:bg-gray-800 dark:disabled:bg-gray-900';

function borderClasses(error: string | undefined): string {
  return error
    ? 'border-red-500 focus:outline-red-500'
    : 'border-gray-300 focus:outline-brand-500 dark:border-gray-600';
}

type BaseProps = {
  label: ReactNode;
  name: string;
  error?: string | undefined;
  description?: ReactNode;
  onBlur?: () => void;
};

/**
 * A required field's visible mark. Screen readers hear "required" from the input's aria-required instead (the
 * native `required` would let the browser's own bubble pre-empt the spec's "This field is required").
 */
export function RequiredMark() {
  return (
    <span aria-hidden="true" className="ml-0.5 text-red-600 dark:text-red-400" title={t('field.required')}>
      *
    </span>
  );
}

function FieldShell({
  id,
  label,
  error,
  description,
  isRequired,
  children,
}: {
  id: string;
  label: ReactNode;
  error?: string | undefined;
  description?: ReactNode;
  isRequired?: boolean | undefined;
  children: ReactNode;
}) {
  return (
    <div className="flex flex-col gap-1">
      {/* The mark sits beside the label, not in it: the label's text stays the field's name. */}
      <div className="flex items-baseline">
        <label htmlFor={id} className="text-sm font-medium text-gray-700 dark:text-gray-200">
          {label}
        </label>
        {isRequired && <RequiredMark />}
      </div>
      {children}
      {description && <p className="text-xs text-gray-500 dark:text-gray-400">{description}</p>}
      {error && (
        <p id={`${id}-error`} className="text-xs text-red-600 dark:text-red-400" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

type TextFieldProps = BaseProps & {
  value: string | number | null | undefined;
  onChange: (value: string) => void;
} & Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'onBlur' | 'name'>;

export function TextField({
  label,
  name,
  error,
  description,
  value,
  onChange,
  onBlur,
  required,
  ...inputProps
}: TextFieldProps) {
  const id = useId();
  return (
    <FieldShell id={id} label={label} error={error} description={description} isRequired={required}>
      <input
        id={id}
        name={name}
        aria-required={required ? true : undefined}
        value={value ?? ''}
        onChange={(event) => onChange(event.target.value)}
        onBlur={onBlur}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        className={`${inputClasses} ${borderClasses(error)}`}
        {...inputProps}
      />
    </FieldShell>
  );
}

type CheckboxFieldProps = BaseProps & {
  value: boolean | null | undefined;
  onChange: (value: boolean) => void;
  disabled?: boolean;
};

export function CheckboxField({
  label,
  name,
  error,
  description,
  value,
  onChange,
  onBlur,
  disabled,
}: CheckboxFieldProps) {
  const id = useId();
  return (
    <div className="flex flex-col gap-1">
      <div className="flex items-center gap-2">
        <input
          id={id}
          name={name}
          type="checkbox"
          checked={value === true}
          disabled={disabled}
          onChange={(event) => onChange(event.target.checked)}
          onBlur={onBlur}
          className="size-4 rounded border-gray-300 accent-brand-600"
        />
        <label htmlFor={id} className="text-sm text-gray-700 dark:text-gray-200">
          {label}
        </label>
      </div>
      {description && <p className="pl-6 text-xs text-gray-500 dark:text-gray-400">{description}</p>}
      {error && (
        <p className="pl-6 text-xs text-red-600 dark:text-red-400" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export type SelectOption = { value: string; label: string };

type SelectFieldProps = BaseProps & {
  value: string | null | undefined;
  onChange: (value: string) => void;
  options: readonly SelectOption[];
  placeholder?: string;
  disabled?: boolean;
};

export function SelectField({
  label,
  name,
  error,
  description,
  value,
  onChange,
  onBlur,
  options,
  placeholder,
  disabled,
}: SelectFieldProps) {
  const id = useId();
  return (
    <FieldShell id={id} label={label} error={error} description={description}>
      <select
        id={id}
        name={name}
        value={value ?? ''}
        disabled={disabled}
        onChange={(event) => onChange(event.target.value)}
        onBlur={onBlur}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        className={`${inputClasses} ${borderClasses(error)}`}
      >
        {placeholder !== undefined && <option value="">{placeholder}</option>}
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldShell>
  );
}

type TextareaFieldProps = BaseProps & {
  value: string | null | undefined;
  onChange: (value: string) => void;
  rows?: number;
  placeholder?: string;
  disabled?: boolean;
};

export function TextareaField({
  label,
  name,
  error,
  description,
  value,
  onChange,
  onBlur,
  rows = 3,
  placeholder,
  disabled,
}: TextareaFieldProps) {
  const id = useId();
  return (
    <FieldShell id={id} label={label} error={error} description={description}>
      <textarea
        id={id}
        name={name}
        rows={rows}
        value={value ?? ''}
        placeholder={placeholder}
        disabled={disabled}
        onChange={(event) => onChange(event.target.value)}
        onBlur={onBlur}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        className={`${inputClasses} ${borderClasses(error)} font-mono`}
      />
    </FieldShell>
  );
}

/** Text → list: one entry per line or comma, blanks dropped. */
export function parseList(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

type IpListFieldProps = BaseProps & {
  value: readonly string[] | null | undefined;
  onChange: (value: string[]) => void;
  placeholder?: string;
  disabled?: boolean;
};

/** A list of IPs/CIDRs edited as text, one per line. Keeps the typed text so a trailing newline is not eaten. */
export function IpListField({ value, onChange, placeholder = '192.168.1.0/24', ...rest }: IpListFieldProps) {
  const [text, setText] = useState(() => (value ?? []).join('\n'));
  const joined = (value ?? []).join('\n');
  // Follow outside changes (a reset), but not the normalisation of what the user is typing. Adjusted while
  // rendering, when the value changed, rather than in an effect (react.dev, "you might not need an effect").
  const [followedJoined, setFollowedJoined] = useState(joined);
  if (joined !== followedJoined) {
    setFollowedJoined(joined);
    setText((current) => (parseList(current).join('\n') === joined ? current : joined));
  }
  return (
    <TextareaField
      {...rest}
      value={text}
      placeholder={placeholder}
      onChange={(next) => {
        setText(next);
        onChange(parseList(next));
      }}
    />
  );
}

type AutocompleteFieldProps = BaseProps & {
  value: string | null | undefined;
  onChange: (value: string) => void;
  /** Suggestions for the typed text; called 300 ms after typing stops. Custom values are always allowed. */
  loadOptions: (query: string) => Promise<string[]>;
  placeholder?: string;
  disabled?: boolean;
};

/**
 * The WAI-ARIA combobox pattern with a list popup: ArrowDown/ArrowUp move through the suggestions (the input keeps
 * focus; aria-activedescendant names the active one), Enter picks the active suggestion instead of submitting the
 * form, Escape closes the list (a second Escape reaches the dialog), Tab leaves with what was typed.
 */
export function AutocompleteField({
  label,
  name,
  error,
  description,
  value,
  onChange,
  onBlur,
  loadOptions,
  placeholder,
  disabled,
}: AutocompleteFieldProps) {
  const id = useId();
  const [isOpen, setOpen] = useState(false);
  const [options, setOptions] = useState<string[]>([]);
  const [activeIndex, setActiveIndex] = useState(-1);
  const closeTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const query = value ?? '';

  useEffect(() => {
    if (!isOpen) return;
    let isCurrent = true;
    const timer = setTimeout(() => {
      loadOptions(query).then(
        (found) => {
          if (!isCurrent) return;
          setOptions(found);
          setActiveIndex(-1);
        },
        (loadError: unknown) => console.error('autocomplete options failed', loadError),
      );
    }, timing.autocompleteDebounceMs);
    return () => {
      isCurrent = false;
      clearTimeout(timer);
    };
  }, [query, isOpen, loadOptions]);

  useEffect(() => () => clearTimeout(closeTimer.current), []);

  const isListShown = isOpen && options.length > 0;
  const optionId = (index: number) => `${id}-option-${index}`;
  const pick = (option: string) => {
    onChange(option);
    setOpen(false);
    setActiveIndex(-1);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!isListShown) {
        setOpen(true);
        return;
      }
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActiveIndex(
        (current) => (current + step + options.length + (current < 0 && step < 0 ? 1 : 0)) % options.length,
      );
    } else if (event.key === 'Enter' && isListShown && activeIndex >= 0) {
      event.preventDefault();
      const option = options[activeIndex];
      if (option !== undefined) pick(option);
    } else if (event.key === 'Escape' && isListShown) {
      event.stopPropagation();
      setOpen(false);
      setActiveIndex(-1);
    }
  };

  return (
    <FieldShell id={id} label={label} error={error} description={description}>
      <div className="relative">
        <input
          id={id}
          name={name}
          role="combobox"
          aria-expanded={isListShown}
          aria-controls={`${id}-list`}
          aria-autocomplete="list"
          aria-activedescendant={isListShown && activeIndex >= 0 ? optionId(activeIndex) : undefined}
          autoComplete="off"
          value={query}
          placeholder={placeholder}
          disabled={disabled}
          onFocus={() => setOpen(true)}
          onChange={(event) => {
            setOpen(true);
            onChange(event.target.value);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => {
            // Close a little later so a click on a suggestion still lands (the spec's "Business constants and limits":
            // 150 ms).
            closeTimer.current = setTimeout(() => setOpen(false), timing.selectBlurCloseMs);
            onBlur?.();
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          className={`${inputClasses} ${borderClasses(error)}`}
        />
        {isListShown && (
          <ul
            id={`${id}-list`}
            role="listbox"
            aria-label={t('ui.suggestionsFor', { field: typeof label === 'string' ? label : name })}
            className="absolute z-10 mt-1 max-h-48 w-full overflow-auto rounded-md border border-gray-200 bg-white py-1 shadow-lg dark:border-gray-700 dark:bg-gray-900"
          >
            {options.map((option, index) => (
              <li
                key={option}
                id={optionId(index)}
                role="option"
                aria-selected={index === activeIndex}
                onMouseDown={(event) => event.preventDefault()}
                onClick={() => pick(option)}
                className={`cursor-pointer px-3 py-1.5 text-sm hover:bg-gray-100 dark:hover:bg-gray-800 ${index === activeIndex ? 'bg-brand-50 text-brand-700 outline-2 -outline-offset-2 outline-brand-600 dark:bg-gray-800 dark:text-white' : ''}`}
              >
                {option}
              </li>
            ))}
          </ul>
        )}
      </div>
    </FieldShell>
  );
}
