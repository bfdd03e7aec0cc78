import { sql, type SQL } from 'drizzle-orm';
import type { Engine } from './client.js';
import { httpServices, tcpServices } from './schema.js';

// Substring search of services through the trigram indexes (drizzle/0020_services_search.sql): on SQLite, a search
// text of 3 characters or more narrows the rows to those whose name, domain, path (HTTP) or port (TCP/UDP) holds it,
// case-insensitively, before the callers' own exact conditions run on what is left. The index only narrows: a caller
// keeps its `instr(lower(…))` conditions, so the results are the same with or without it. Shorter texts (which match
// most rows anyway) and PostgreSQL read every row as before.

/** Fewer characters than a trigram: the index cannot narrow. */
const MIN_LENGTH = 3;

/** Characters as the trigram tokenizer counts them: Unicode code points. */
const codePoints = (text: string): number => text.match(/./gsu)?.length ?? 0;

/** `text` as one FTS5 phrase (a double-quoted string: nothing inside is query syntax). */
const phrase = (text: string): string => `"${text.replaceAll('"', '""')}"`;

export interface SearchNarrowing {
  /** A condition on http_services, or undefined when the index cannot narrow. */
  http: SQL | undefined;
  /** A condition on tcp_services, or undefined when the index cannot narrow. */
  tcp: SQL | undefined;
}

const NONE: SearchNarrowing = { http: undefined, tcp: undefined };

/**
 * Rows whose name, domain, path (HTTP) or port (TCP/UDP) contains `text`, case-insensitively: a superset of the
 * rows an exact `instr(lower(column), lower(text))` over those columns finds.
 */
export function narrowByText(engine: Engine, text: string): SearchNarrowing {
  if (engine !== 'sqlite' || codePoints(text) < MIN_LENGTH) return NONE;
  const match = phrase(text);
  return {
    http: sql`${httpServices.id} in (select rowid from http_services_search where http_services_search match ${match})`,
    tcp: sql`${tcpServices.id} in (select rowid from tcp_services_search where tcp_services_search match ${match})`,
  };
}

/**
 * For a search of the services' public addresses as well as their columns: an address is built from the columns
 * (domain, path, port) and fixed texts of the gateway's (`https`, `tcp`, `udp`, its public host, its ports), joined
 * by `:` and `/`. A part of the text between those separators lies inside one run of an address between
 * separators, so one that no fixed text contains lies inside a domain, a path or a port column (or the name, when
 * the whole text does): the longest such part narrows. None (every part short, or inside a fixed text): no narrowing.
 */
export function narrowByAddressText(engine: Engine, text: string, fixedTexts: readonly string[]): SearchNarrowing {
  const fixed = fixedTexts.map((part) => part.toLowerCase());
  const parts = text
    .toLowerCase()
    .split(/[/:]/)
    .filter((part) => codePoints(part) >= MIN_LENGTH && !fixed.some((known) => known.includes(part)))
    .sort((a, b) => b.length - a.length);
  const [longest] = parts;
  return longest === undefined ? NONE : narrowByText(engine, longest);
}
