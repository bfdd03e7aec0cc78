import { describe, expect, it } from 'vitest';
import { snapshotPieces } from './proxy/snapshots.js';

describe('the routes snapshot', () => {
  it('is the JSON nginx’s init() reads, written in pieces of about 1 MiB', () => {
    const hosts = new Map(
      Array.from({ length: 800 }, (_, i): [string, string] => [
        `h${i}.test`,
        JSON.stringify([{ s: i, p: '/', u: 'x'.repeat(4000) }]),
      ]),
    );
    hosts.set('', '[{"s":9999,"p":"/tools"}]');
    const pieces = [...snapshotPieces(hosts, ['h1.test', 'not a host'], 'v.7')];
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) expect(piece.length).toBeLessThan((1 << 20) + 5000);
    expect(JSON.parse(pieces.join(''))).toEqual({
      version: 'v.7',
      hosts: Object.fromEntries(hosts),
      certs: ['_fallback', 'h1.test'],
    });
    expect(JSON.parse([...snapshotPieces(new Map(), [], 'v')].join(''))).toEqual({
      version: 'v',
      hosts: {},
      certs: ['_fallback'],
    });
  });
});
