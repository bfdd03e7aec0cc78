// drizzle's SQLite dialect writes standard SQL (double-quoted identifiers, `returning`, `on conflict … do update set
// … = excluded.…`, `limit ? offset ?`). What PostgreSQL reads differently: the placeholders (SQLite's `?`,
// PostgreSQL's `$1…$n`), backquoted identifiers (SQLite takes them; older raw SQL uses them), and the columns of a
// conflict target, which drizzle qualifies (`on conflict ("settings"."key")`) and PostgreSQL wants bare. Strings,
// identifiers and comments are copied as they are.

/** The SQLite-dialect statement as PostgreSQL reads it. */
export function toPostgresSql(text: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  /** Inside the parentheses of `on conflict (…)`. */
  let conflictTarget = false;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === "'") {
      const end = closing(text, i, c);
      out += text.slice(i, end);
      i = end;
    } else if (c === '"' || c === '`') {
      const end = closing(text, i, c);
      const name = text.slice(i + 1, end - 1).replaceAll(c + c, c);
      i = end;
      // A table qualifier in a conflict target is dropped with its dot.
      if (conflictTarget && text[i] === '.') i += 1;
      else out += `"${name.replaceAll('"', '""')}"`;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += text.slice(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop);
      i = stop;
    } else if (c === '?') {
      if (/[0-9]/.test(text[i + 1] ?? '')) throw new Error('numbered ?NNN parameters are not supported on PostgreSQL');
      n += 1;
      out += `$${n}`;
      i += 1;
    } else {
      if (c === '(' && /\bon\s+conflict\s*$/i.test(out.slice(-32))) conflictTarget = true;
      else if (c === ')') conflictTarget = false;
      out += c;
      i += 1;
    }
  }
  return out;
}

/** Index just past the quote that closes the one at `start` (a doubled quote stands for itself). */
function closing(text: string, start: number, quote: string): number {
  let i = start + 1;
  for (;;) {
    const next = text.indexOf(quote, i);
    if (next === -1) throw new Error('unterminated quote in SQL');
    if (text[next + 1] === quote) {
      i = next + 2;
      continue;
    }
    return next + 1;
  }
}
