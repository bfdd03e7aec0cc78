import { useEffect, useId, useRef } from 'react';
import { chooseLanguage, t, useLanguage } from '../i18n/i18n';
import { languages, type LanguageCode } from '../i18n/languages';

// The console re-renders from its root when the language changes (main.tsx), which also remounts this menu: the
// choice the operator just made keeps focus on it.
let isChoosing = false;

/** The console's language: each named in its own language; the choice is kept in this browser (i18n.ts). */
export function LanguageMenu({ className = '' }: { className?: string }) {
  const language = useLanguage();
  const id = useId();
  const selectRef = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    const select = selectRef.current;
    if (isChoosing && select && select.offsetParent !== null) {
      isChoosing = false;
      select.focus();
    }
  }, []);
  return (
    <div className={className}>
      <label htmlFor={id} className="sr-only">
        {t('language.label')}
      </label>
      <select
        ref={selectRef}
        id={id}
        data-language-menu
        value={language}
        title={t('language.label')}
        onChange={(event) => {
          isChoosing = true;
          void chooseLanguage(event.target.value as LanguageCode).catch(() => {
            isChoosing = false;
          });
        }}
        className="max-w-36 rounded-md border border-gray-300 bg-white py-1.5 pr-7 pl-2 text-sm text-gray-700 dark:border-gray-600 dark:bg-gray-900 dark:text-gray-200"
      >
        {languages.map((option) => (
          <option key={option.code} value={option.code} lang={option.code}>
            {option.name}
          </option>
        ))}
      </select>
    </div>
  );
}
