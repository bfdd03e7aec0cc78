import { formatDate } from '@postern/contract';
import type { ReactNode } from 'react';
import { useEffect, useId, useRef, useState } from 'react';
import { CalendarIcon, ChevronLeftIcon, ChevronRightIcon } from './icons';
import { activeLanguage, SOURCE_LANGUAGE, t } from '../../i18n/i18n';

// A single-date picker (the spec's "Screens and routes" token form): placeholder 'Select a date', nothing before today
// selectable, value an ISO timestamp or undefined when cleared. A picked day means "until the end of that day", so
// picking today still lies after now.

const WEEKDAYS = ['Su', 'Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa'];

/** The weekday heads from Sunday: the spec's two letters in English, the language's short names (Intl) otherwise. */
function weekdays(): string[] {
  const language = activeLanguage();
  if (language === SOURCE_LANGUAGE) return WEEKDAYS;
  const format = new Intl.DateTimeFormat(language, { weekday: 'short' });
  // 2023-01-01 was a Sunday.
  return WEEKDAYS.map((_, index) => format.format(new Date(2023, 0, 1 + index)));
}

export function endOfDayIso(year: number, month: number, day: number): string {
  return new Date(year, month, day, 23, 59, 59, 999).toISOString();
}

function startOfToday(now: Date): number {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
}

/** The days of a month grid, with nulls before the 1st so weekdays line up. */
export function monthGrid(year: number, month: number): (number | null)[] {
  const leading = new Date(year, month, 1).getDay();
  const days = new Date(year, month + 1, 0).getDate();
  return [...Array.from({ length: leading }, () => null), ...Array.from({ length: days }, (_, i) => i + 1)];
}

type DatePickerProps = {
  label: ReactNode;
  name: string;
  value: string | undefined;
  onChange: (value: string | undefined) => void;
  error?: string | undefined;
  description?: ReactNode;
  placeholder?: string;
  now?: () => Date;
};

export function DatePicker({
  label,
  name,
  value,
  onChange,
  error,
  description,
  placeholder = t('ui.selectDate'),
  now = () => new Date(),
}: DatePickerProps) {
  const id = useId();
  const [isOpen, setOpen] = useState(false);
  const initial = value ? new Date(value) : now();
  const [view, setView] = useState({ year: initial.getFullYear(), month: initial.getMonth() });
  const rootRef = useRef<HTMLDivElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  // Picking a day, Escape or Clear removes what had focus: hand it back to the field, never to the page body.
  const close = () => {
    setOpen(false);
    triggerRef.current?.focus();
  };

  useEffect(() => {
    if (!isOpen) return;
    const onPointer = (event: MouseEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.stopPropagation(); // close the calendar, not the dialog around it
        setOpen(false);
        triggerRef.current?.focus();
      }
    };
    document.addEventListener('mousedown', onPointer);
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('mousedown', onPointer);
      document.removeEventListener('keydown', onKey, true);
    };
  }, [isOpen]);

  const today = startOfToday(now());
  const selected = value ? new Date(value) : null;
  const monthLabel = new Date(view.year, view.month, 1).toLocaleString(
    activeLanguage() === SOURCE_LANGUAGE ? 'en-US' : activeLanguage(),
    { month: 'long', year: 'numeric' },
  );
  const shiftMonth = (delta: number) =>
    setView(({ year, month }) => {
      const next = new Date(year, month + delta, 1);
      return { year: next.getFullYear(), month: next.getMonth() };
    });
  const isPastMonth =
    new Date(view.year, view.month, 1).getTime() <=
    new Date(new Date(today).getFullYear(), new Date(today).getMonth(), 1).getTime();

  return (
    <div ref={rootRef} className="relative flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-gray-700 dark:text-gray-200">
        {label}
      </label>
      <div className="flex gap-2">
        <button
          ref={triggerRef}
          id={id}
          name={name}
          type="button"
          aria-invalid={error ? true : undefined}
          aria-haspopup="dialog"
          aria-expanded={isOpen}
          onClick={() => setOpen((open) => !open)}
          className={`flex flex-1 items-center gap-2 rounded-md border bg-white px-3 py-2 text-left text-sm dark:bg-gray-800 ${error ? 'border-red-500' : 'border-gray-300 dark:border-gray-600'}`}
        >
          <CalendarIcon className="size-4 text-gray-500" />
          <span className={value ? '' : 'text-gray-500 dark:text-gray-400'}>
            {value ? formatDate(value) : placeholder}
          </span>
        </button>
        {value && (
          <button
            type="button"
            onClick={() => {
              onChange(undefined);
              triggerRef.current?.focus();
            }}
            className="rounded-md px-2 text-sm text-gray-500 hover:bg-gray-100 dark:hover:bg-gray-800"
          >
            {t('ui.clear')}
          </button>
        )}
      </div>
      {description && <p className="text-xs text-gray-500 dark:text-gray-400">{description}</p>}
      {error && (
        <p className="text-xs text-red-600 dark:text-red-400" role="alert">
          {error}
        </p>
      )}
      {isOpen && (
        <div
          role="dialog"
          aria-label={t('ui.chooseDate')}
          className="absolute top-full z-20 mt-1 w-72 rounded-md border border-gray-200 bg-white p-3 shadow-lg dark:border-gray-700 dark:bg-gray-900"
        >
          <div className="mb-2 flex items-center justify-between">
            <button
              type="button"
              aria-label={t('ui.previousMonth')}
              disabled={isPastMonth}
              onClick={() => shiftMonth(-1)}
              className="rounded p-1 hover:bg-gray-100 disabled:opacity-30 dark:hover:bg-gray-800"
            >
              <ChevronLeftIcon className="size-4" />
            </button>
            <span className="text-sm font-medium">{monthLabel}</span>
            <button
              type="button"
              aria-label={t('ui.nextMonth')}
              onClick={() => shiftMonth(1)}
              className="rounded p-1 hover:bg-gray-100 dark:hover:bg-gray-800"
            >
              <ChevronRightIcon className="size-4" />
            </button>
          </div>
          <div className="grid grid-cols-7 gap-1 text-center text-xs">
            {weekdays().map((day) => (
              <span key={day} className="py-1 text-gray-500 dark:text-gray-400">
                {day}
              </span>
            ))}
            {monthGrid(view.year, view.month).map((day, index) => {
              if (day === null) return <span key={`blank-${index}`} />;
              const time = new Date(view.year, view.month, day).getTime();
              const isSelected = selected !== null && startOfToday(selected) === time;
              return (
                <button
                  key={day}
                  type="button"
                  disabled={time < today}
                  aria-pressed={isSelected}
                  onClick={() => {
                    onChange(endOfDayIso(view.year, view.month, day));
                    close();
                  }}
                  className={`rounded py-1 disabled:cursor-not-allowed disabled:text-gray-300 dark:disabled:text-gray-600 ${isSelected ? 'bg-brand-600 text-white' : 'hover:bg-gray-100 dark:hover:bg-gray-800'}`}
                >
                  {day}
                </button>
              );
            })}
          </div>
        </div>
      )}
    </div>
  );
}
