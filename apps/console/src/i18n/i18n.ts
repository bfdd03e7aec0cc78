import { useSyncExternalStore } from 'react';
import type en from './catalogs/en.json';
import { languages, type LanguageCode } from './languages';
import type { Part } from './parts';
import { Translator, type Catalogue, type Messages } from './runtime';

// The console's texts: English is the source (catalogs/en.json, the spec's words); every other language is laid over
// it, so a string a language lacks shows in English, never as its id. Catalogues are chunks of their own, fetched
// when a language is activated (the first page's JS budget, scripts/initial-js-size.mjs).

export type MessageId = keyof typeof en;
export type MessageValues = Record<string, string | number>;

export const SOURCE_LANGUAGE: LanguageCode = 'en';
/** localStorage key of the operator's choice; without one the browser's languages decide. */
export const LANGUAGE_STORAGE_KEY = 'language';

const i18n = new Translator();

/** The active language's text for `id`, with `{name}` placeholders and ICU plurals filled from `values`. */
export function t(id: MessageId, values?: MessageValues): string {
  return i18n.translate(id, values);
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

/**
 * A server's or a form's message in the active language: `error.<code>` (contract message-codes.ts) with the
 * message's values. English shows `message` exactly as sent; a code the catalogue lacks (a newer gateway), or none at
 * all, or texts not fetched yet, show the English `message` too: never an id. (Here, not in a module of its own: the
 * first page's API layer uses it, and a module of its own split the entry chunk.)
 */
export function translatedMessage(
  message: string,
  code: string | null | undefined,
  params?: MessageValues | null,
): string {
  if (!code || activeLanguage() === SOURCE_LANGUAGE) return message;
  const id = `error.${code}`;
  const text = i18n.translate(id, params ?? undefined);
  if (text === id) return message;
  // A list field's message about one entry (`10.1.0.0/24: …`): the entry before the reason, in the language's way.
  const entry = params?.entry;
  return typeof entry === 'string' ? i18n.translate('ui.listEntry', { entry, reason: text }) : text;
}

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

const catalogues = new Map<LanguageCode, Promise<Catalogue>>();
const loaded = new Map<string, Promise<Messages>>();
function loadCatalog(code: LanguageCode, part: Part): Promise<Messages> {
  const key = `${code}/${part}`;
  let messages = loaded.get(key);
  if (!messages) {
    let catalogue = catalogues.get(code);
    if (!catalogue) {
      const language = languages.find((candidate) => candidate.code === code) ?? languages[0];
      catalogue = language.load();
      catalogue.catch(() => catalogues.delete(code));
      catalogues.set(code, catalogue);
    }
    messages = catalogue.then(async (module) => (part === 'first' ? module.first : (await module[part]()).default));
    // A failed fetch (the gateway unreachable) may be tried again on the next call.
    messages.catch(() => loaded.delete(key));
    loaded.set(key, messages);
  }
  return messages;
}

/** The parts the console has needed so far (parts.ts). */
const parts: Part[] = ['first'];

/** `code`'s texts of `parts`, laid over English's. */
async function messagesOf(code: LanguageCode): Promise<Messages> {
  const loadedParts = await Promise.all(
    parts.flatMap((part) => [
      loadCatalog(SOURCE_LANGUAGE, part),
      code === SOURCE_LANGUAGE ? Promise.resolve({}) : loadCatalog(code, part),
    ]),
  );
  return Object.assign({}, ...loadedParts) as Messages;
}

/** Fetches the language's catalogue (and English under it), makes it the active one and names it on `<html lang>`. */
export async function activateLanguage(code: LanguageCode): Promise<void> {
  let messages: Messages;
  let partsAsked: number;
  // The rest may be asked for while this language loads: then it is fetched too before the language shows.
  do {
    partsAsked = parts.length;
    messages = await messagesOf(code);
  } while (partsAsked !== parts.length);
  i18n.load(code, messages);
  i18n.activate(code);
  document.documentElement.lang = code;
}

// Parts are added one at a time, each applied with all before it, so a later part never loses an earlier one.
const asked = new Map<Part, Promise<void>>();
let queue: Promise<unknown> = Promise.resolve();
function loadPart(part: Part): Promise<void> {
  let pending = asked.get(part);
  if (!pending) {
    pending = queue
      .catch(() => undefined)
      .then(async () => {
        if (!parts.includes(part)) parts.push(part);
        try {
          const code = activeLanguage();
          i18n.load(code, await messagesOf(code));
        } catch (error) {
          parts.splice(parts.indexOf(part), 1);
          asked.delete(part);
          throw error;
        }
      });
    queue = pending;
    asked.set(part, pending);
  }
  return pending;
}

/** The texts beyond the first page, in the active language; fetched once, before any other screen renders. */
export async function loadMoreTexts(): Promise<void> {
  await Promise.all([loadPart('signin'), loadPart('home'), loadPart('more')]);
}

/**
 * A module once the texts of `part` are there too: the sign-in pages (`signin`), the home page's overview (`home`),
 * any other screen (`more`, which brings the others: settings and accounts name sign-in texts too).
 */
export async function withTexts<T>(part: 'signin' | 'home' | 'more', module: Promise<T>): Promise<T> {
  const [loadedModule] = await Promise.all([module, part === 'more' ? loadMoreTexts() : loadPart(part)]);
  return loadedModule;
}

/** A screen's module once the texts beyond the first page are there too (router.tsx). */
export const withMoreTexts = <T>(module: Promise<T>): Promise<T> => withTexts('more', module);

/** The operator's choice in the language menu: remembered in this browser, then activated. */
export async function chooseLanguage(code: LanguageCode): Promise<void> {
  await activateLanguage(code);
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, code);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
}

const subscribe = (onChange: () => void) => i18n.on(onChange);

/** The active language; a component using it renders again when the language changes. */
export function useLanguage(): LanguageCode {
  return useSyncExternalStore(subscribe, activeLanguage, activeLanguage);
}
