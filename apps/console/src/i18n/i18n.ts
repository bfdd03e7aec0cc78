import { setupI18n, type Messages } from '@lingui/core';
import { useSyncExternalStore } from 'react';
import type en from './catalogs/en.json';
import { languages, type LanguageCode } from './languages';

// The console's texts: English is the source (catalogs/en.json, the spec's words); every other language is laid over
// it, so a string a language lacks shows in English, never as its id. Catalogues are chunks of their own, fetched
// when a language is activated (the first page's JS budget, scripts/initial-js-size.mjs).

export type MessageId = keyof typeof en;
export type MessageValues = Record<string, string | number>;

export const SOURCE_LANGUAGE: LanguageCode = 'en';
/** localStorage key of the operator's choice; without one the browser's languages decide. */
export const LANGUAGE_STORAGE_KEY = 'language';

const i18n = setupI18n();

/** The active language's text for `id`, with `{name}` placeholders and ICU plurals filled from `values`. */
export function t(id: MessageId, values?: MessageValues): string {
  return i18n._(id, values);
}

/**
 * The text of `id` split around the placeholder `{slot}`, for a message whose slot is an element (a name in bold):
 * `[before, after]`, in the language's own word order.
 */
export function withSlot(id: MessageId, slot: string, values?: MessageValues): [string, string] {
  const marker = '\u0000';
  const text = t(id, { ...values, [slot]: marker });
  const at = text.indexOf(marker);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + marker.length)];
}

export const activeLanguage = (): LanguageCode => (i18n.locale || SOURCE_LANGUAGE) as LanguageCode;

const codes: readonly string[] = languages.map((language) => language.code);
const isLanguageCode = (value: string | null): value is LanguageCode => value !== null && codes.includes(value);

/**
 * The language to start in: the stored choice, else the first of the browser's languages the console speaks (exact
 * tag first, then its primary language: `pt-PT` → Português (Brasil), `zh` → 简体中文), else English.
 */
export function pickLanguage(stored: string | null, preferred: readonly string[]): LanguageCode {
  if (isLanguageCode(stored)) return stored;
  for (const tag of preferred) {
    const exact = languages.find((language) => language.code.toLowerCase() === tag.toLowerCase());
    if (exact) return exact.code;
    const primary = tag.split('-')[0]?.toLowerCase();
    // Traditional Chinese readers are not served by the Simplified catalogue.
    if (primary === 'zh' && /-(tw|hk|mo|hant)\b/i.test(tag)) continue;
    const sameLanguage = languages.find((language) => language.code.split('-')[0] === primary);
    if (sameLanguage) return sameLanguage.code;
  }
  return SOURCE_LANGUAGE;
}

function readStoredLanguage(): string | null {
  try {
    return localStorage.getItem(LANGUAGE_STORAGE_KEY);
  } catch {
    return null;
  }
}

export const initialLanguage = (): LanguageCode =>
  pickLanguage(readStoredLanguage(), typeof navigator === 'undefined' ? [] : navigator.languages);

const loaded = new Map<LanguageCode, Promise<Messages>>();
function loadCatalog(code: LanguageCode): Promise<Messages> {
  let messages = loaded.get(code);
  if (!messages) {
    const language = languages.find((candidate) => candidate.code === code) ?? languages[0];
    messages = language.load().then((module) => module.default);
    // A failed fetch (the gateway unreachable) may be tried again on the next choice.
    messages.catch(() => loaded.delete(code));
    loaded.set(code, messages);
  }
  return messages;
}

/** Fetches the language's catalogue (and English under it), makes it the active one and names it on `<html lang>`. */
export async function activateLanguage(code: LanguageCode): Promise<void> {
  const [source, own] = await Promise.all([
    loadCatalog(SOURCE_LANGUAGE),
    code === SOURCE_LANGUAGE ? Promise.resolve({}) : loadCatalog(code),
  ]);
  i18n.load(code, { ...source, ...own });
  i18n.activate(code);
  document.documentElement.lang = code;
}

/** The operator's choice in the language menu: remembered in this browser, then activated. */
export async function chooseLanguage(code: LanguageCode): Promise<void> {
  await activateLanguage(code);
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, code);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
}

const subscribe = (onChange: () => void) => i18n.on('change', onChange);

/** The active language; a component using it renders again when the language changes. */
export function useLanguage(): LanguageCode {
  return useSyncExternalStore(subscribe, activeLanguage, activeLanguage);
}
