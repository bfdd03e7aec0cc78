import { describe, expect, it } from 'vitest';
import { toPostgresSql } from './postgres-sql.js';

describe('toPostgresSql', () => {
  it.each([
    [
      'select * from "t" where "a" = ? and "b" in (?, ?) limit ? offset ?',
      'select * from "t" where "a" = $1 and "b" in ($2, $3) limit $4 offset $5',
    ],
    ["select '?', 'it''s ?', ? from \"q?\"\"x\"", "select '?', 'it''s ?', $1 from \"q?\"\"x\""],
    ['select ? -- why?\n, ? /* what? */ , ?', 'select $1 -- why?\n, $2 /* what? */ , $3'],
    ['insert into `__drizzle_migrations` ("hash") values(?)', 'insert into "__drizzle_migrations" ("hash") values($1)'],
    [
      'insert into "settings" ("key", "value") values (?, ?) on conflict ("settings"."key") do update set "value" = excluded.value',
      'insert into "settings" ("key", "value") values ($1, $2) on conflict ("key") do update set "value" = excluded.value',
    ],
    ['on conflict ("t"."a", "t"."b") do nothing', 'on conflict ("a", "b") do nothing'],
    ['select \'on conflict ("t"."a")\'', 'select \'on conflict ("t"."a")\''],
  ])('%s', (sqlite, postgres) => {
    expect(toPostgresSql(sqlite)).toBe(postgres);
  });

  it('refuses what it cannot translate', () => {
    expect(() => toPostgresSql("select 'open")).toThrow(/unterminated/);
    expect(() => toPostgresSql('select ?1')).toThrow(/numbered/);
  });
});
