// The console's message runtime: formats messages in the compiled form of Lingui's compiler (@lingui/message-utils,
// run at build by i18n-catalogs.ts) — text, `[name]`, and `[name, 'plural' | 'selectordinal' | 'select' | 'number',
// branches]` with `#` for the count in plural branches. It stands in for @lingui/core's runtime (2.3 KiB gzipped, with
// formats the console does not use) because the first page's JavaScript budget has no room for it; what it reads is
// what Lingui compiles, and catalogs.test.ts compiles every message.

type Token = string | [name: string, type?: string, branches?: Record<string, unknown>];
export type CompiledMessage = Token[] | string;
export type Messages = Record<string, CompiledMessage>;
export type Values = Record<string, string | number>;
/** A language's catalogue module (i18n-catalogs.ts): the first page's texts, the other parts' loaders. */
export type Catalogue = {
  first: Messages;
  signin: () => Promise<{ default: Messages }>;
  home: () => Promise<{ default: Messages }>;
  more: () => Promise<{ default: Messages }>;
};

function render(message: CompiledMessage, locale: string, values: Values, count?: number): string {
  if (typeof message === 'string') return message;
  let text = '';
  for (const token of message) {
    if (typeof token === 'string') {
      text += token === '#' && count !== undefined ? new Intl.NumberFormat(locale).format(count) : token;
      continue;
    }
    const [name, type, branches = {}] = token;
    const value = values[name];
    if (type === 'plural' || type === 'selectordinal') {
      const number = Number(value) - Number(branches.offset ?? 0);
      const rule = new Intl.PluralRules(locale, { type: type === 'plural' ? 'cardinal' : 'ordinal' }).select(number);
      const branch = branches[String(value)] ?? branches[rule] ?? branches.other;
      text += render((branch ?? []) as CompiledMessage, locale, values, number);
    } else if (type === 'select') {
      const branch = branches[String(value)] ?? branches.other;
      text += render((branch ?? []) as CompiledMessage, locale, values, count);
    } else if (type === 'number' && typeof value === 'number') {
      text += new Intl.NumberFormat(locale).format(value);
    } else {
      text += value === undefined ? '' : String(value);
    }
  }
  return text;
}

/** One active locale and its messages; `change` listeners hear of a new locale or newly loaded messages. */
export class Translator {
  locale = '';
  private messages: Messages = {};
  private readonly listeners = new Set<() => void>();

  /** Replaces the messages of `locale` (they are the whole set: the caller lays a language over English). */
  load(locale: string, messages: Messages): void {
    if (locale === this.locale) this.messages = messages;
    else this.pending.set(locale, messages);
    this.emit();
  }

  activate(locale: string): void {
    this.messages = this.pending.get(locale) ?? (locale === this.locale ? this.messages : {});
    this.pending.delete(locale);
    this.locale = locale;
    this.emit();
  }

  /** The text of `id`, or the id itself when no catalogue has it. */
  translate(id: string, values: Values = {}): string {
    const message = this.messages[id];
    return message === undefined ? id : render(message, this.locale, values);
  }

  on(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private readonly pending = new Map<string, Messages>();
  private emit(): void {
    for (const listener of this.listeners) listener();
  }
}
