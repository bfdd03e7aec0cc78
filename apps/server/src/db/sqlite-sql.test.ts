import { describe, expect, it } from 'vitest';
import { toSqliteSql } from './sqlite-sql.js';

describe('toSqliteSql', () => {
  it.each([
    ['select "id" from "t" order by "id" limit ? offset ?', 'select "id" from "t" order by "id" limit +? offset ?'],
    ['SELECT id FROM t LIMIT\n  ?', 'SELECT id FROM t LIMIT\n  +?'],
    [
      'select "id" from "t" where "id" in (select "id" from "t" limit ? offset ?) limit ?',
      'select "id" from "t" where "id" in (select "id" from "t" limit +? offset ?) limit +?',
    ],
    ['select * from t limit 10', 'select * from t limit 10'],
    ['select * from t limit ?1', 'select * from t limit ?1'],
    ['select "unlimit ?" from t where delimit = ?', 'select "unlimit ?" from t where delimit = ?'],
  ])('%s', (given, expected) => {
    expect(toSqliteSql(given)).toBe(expected);
  });

  it('leaves strings, identifiers and comments as they are', () => {
    const text = `select 'limit ?', 'it''s limit ?', "limit ?", \`limit ?\` -- limit ?\n/* limit ? */ from t limit ?`;
    expect(toSqliteSql(text)).toBe(
      `select 'limit ?', 'it''s limit ?', "limit ?", \`limit ?\` -- limit ?\n/* limit ? */ from t limit +?`,
    );
  });
});
