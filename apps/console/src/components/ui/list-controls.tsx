import { useEffect, useId, useState } from 'react';
import { PAGE_SIZES } from '../../lib/list-search';
import { Th } from './table';
import { t } from '../../i18n/i18n';

const SEARCH_DELAY_MS = 300;

/**
 * A search box that reports what was typed once typing pauses, so each keystroke does not become a request (and a
 * history entry). It follows `value` when the URL changes under it (Back).
 */
export function SearchField({
  label,
  value,
  onSearch,
}: {
  label: string;
  value: string;
  onSearch: (value: string) => void;
}) {
  const id = useId();
  const [text, setText] = useState(value);
  // Follow the URL while rendering (react.dev, "you might not need an effect"), not in an effect.
  const [followed, setFollowed] = useState(value);
  if (followed !== value) {
    setFollowed(value);
    setText(value);
  }
  useEffect(() => {
    if (text.trim() === value.trim()) return undefined;
    const timer = setTimeout(() => onSearch(text.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, value, onSearch]);
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <input
        id={id}
        type="search"
        value={text}
        placeholder={label}
        onChange={(event) => setText(event.target.value)}
        className="w-64 max-w-full rounded-md border border-gray-300 bg-white px-3 py-1.5 text-sm placeholder:text-gray-500 dark:border-gray-600 dark:bg-gray-800 dark:placeholder:text-gray-400"
      />
    </div>
  );
}

export function PageSizeSelect({
  value,
  onChange,
  sizes = PAGE_SIZES,
}: {
  value: number;
  onChange: (limit: number) => void;
  sizes?: readonly number[];
}) {
  const id = useId();
  return (
    <div className="flex items-center gap-2 text-sm">
      <label htmlFor={id} className="text-gray-600 dark:text-gray-300">
        {t('ui.rowsPerPage')}
      </label>
      <select
        id={id}
        value={value}
        onChange={(event) => onChange(Number(event.target.value))}
        className="rounded-md border border-gray-300 bg-white px-2 py-1 dark:border-gray-600 dark:bg-gray-800"
      >
        {sizes.map((size) => (
          <option key={size} value={size}>
            {size}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A column header that sorts by its column: a button, with aria-sort on the header cell. */
export function SortableTh<K extends string>({
  label,
  sortKey,
  sort,
  order,
  onSort,
  className,
}: {
  label: string;
  className?: string;
  sortKey: K;
  sort: K | undefined;
  order: 'asc' | 'desc' | undefined;
  onSort: (sort: K, order: 'asc' | 'desc') => void;
}) {
  const isActive = sort === sortKey;
  const direction = order ?? 'asc';
  return (
    <Th className={className} aria-sort={isActive ? (direction === 'asc' ? 'ascending' : 'descending') : undefined}>
      <button
        type="button"
        onClick={() => onSort(sortKey, isActive && direction === 'asc' ? 'desc' : 'asc')}
        className="inline-flex items-center gap-1 uppercase hover:text-gray-900 dark:hover:text-white"
      >
        {label}
        <span aria-hidden="true">{isActive ? (direction === 'asc' ? '▲' : '▼') : '↕'}</span>
      </button>
    </Th>
  );
}
