import { describe, expect, it } from 'vitest';
import { preparedPerDb } from './prepared.js';

describe('preparedPerDb', () => {
  it('prepares once per database and keeps databases apart', () => {
    let prepared = 0;
    const statements = preparedPerDb((db: { name: string }) => ({ name: db.name, n: ++prepared }));
    const a = { name: 'a' };
    const b = { name: 'b' };
    expect(statements(a)).toEqual({ name: 'a', n: 1 });
    expect(statements(a)).toBe(statements(a));
    expect(statements(b)).toEqual({ name: 'b', n: 2 });
    expect(prepared).toBe(2);
  });
});
