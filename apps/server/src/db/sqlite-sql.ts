// SQLite (3.53, as better-sqlite3 12 ships it) reads a bound `LIMIT ?` as a constant when it plans a statement, and
// so marks the statement to be planned again whenever that parameter is bound anew. The driver binds every parameter
// at each run, so a statement prepared once with `limit ?` was parsed and planned again on every run (a list page:
// ~8 % of a list request's CPU and most of its allocations, bench/README.md "api.ts"), and each time to the same plan:
// better-sqlite3 binds a JavaScript number as a REAL, which the planner does not take as a constant limit. `limit +?`
// is an expression, not a bare parameter: planned once, as SQLite planned `limit ?` before anything was bound, and
// the page is the same. Strings, identifiers and comments are copied as they are.

const LIMIT_PARAMETER = /\b(limit\s+)\?(?![0-9])/gi;

/** The statement as the embedded engine is given it: every `limit ?` as `limit +?`. */
export function toSqliteSql(text: string): string {
  let out = '';
  let code = 0;
  let i = 0;
  const flush = (end: number): void => {
    out += text.slice(code, end).replace(LIMIT_PARAMETER, '$1+?');
  };
  while (i < text.length) {
    const c = text.charAt(i);
    let end = -1;
    if (c === "'" || c === '"' || c === '`') end = closing(text, i, c);
    else if (c === '-' && text[i + 1] === '-') {
      const newline = text.indexOf('\n', i);
      end = newline === -1 ? text.length : newline;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      end = close === -1 ? text.length : close + 2;
    }
    if (end === -1) {
      i += 1;
      continue;
    }
    flush(i);
    out += text.slice(i, end);
    code = i = end;
  }
  flush(text.length);
  return out;
}

/** Index just past the quote closing the one at `start` (a doubled quote stands for itself); open: SQLite's error. */
function closing(text: string, start: number, quote: string): number {
  let i = start + 1;
  for (;;) {
    const next = text.indexOf(quote, i);
    if (next === -1) return text.length;
    if (text[next + 1] === quote) {
      i = next + 2;
      continue;
    }
    return next + 1;
  }
}
