import { timing } from '@postern/contract';
import { useEffect, useState } from 'react';
import { CheckIcon, CopyIcon } from './icons';
import { t } from '../../i18n/i18n';

/**
 * Copies `text`; shows a check mark for 2 s (the spec's "Business constants and limits"). A failure is logged and the
 * button stays normal.
 */
export function CopyButton({ text, label = t('ui.copy') }: { text: string; label?: string }) {
  const [isCopied, setCopied] = useState(false);

  useEffect(() => {
    if (!isCopied) return;
    const timer = setTimeout(() => setCopied(false), timing.copyResetMs);
    return () => clearTimeout(timer);
  }, [isCopied]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch (error) {
      console.error('copy to clipboard failed', error);
    }
  };

  return (
    <button
      type="button"
      onClick={copy}
      aria-label={isCopied ? t('ui.copied') : label}
      title={isCopied ? t('ui.copied') : label}
      className="inline-flex items-center rounded-md border border-gray-300 bg-white p-2 text-gray-600 hover:bg-gray-50 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-300"
    >
      {isCopied ? (
        <CheckIcon className="size-4 text-green-600" data-testid="copied" />
      ) : (
        <CopyIcon className="size-4" />
      )}
    </button>
  );
}

/**
 * A read-only value with a copy button beside it (tokens, commands). `label` names the value and `copyLabel` the
 * button, both in the active language (`t('…')`).
 */
export function CopyField({ value, label, copyLabel }: { value: string; label: string; copyLabel: string }) {
  return (
    <div className="flex items-stretch gap-2">
      <input
        readOnly
        aria-label={label}
        value={value}
        onFocus={(event) => event.currentTarget.select()}
        className="min-w-0 flex-1 rounded-md border border-gray-300 bg-gray-50 px-3 py-2 font-mono text-xs dark:border-gray-600 dark:bg-gray-800"
      />
      <CopyButton text={value} label={copyLabel} />
    </div>
  );
}
