import { describe, expect, it } from 'vitest';
import { parseScopePayload, scopePayload } from './announcements.js';

// A scope travels between gateways as a NOTIFY payload, which any database session could send: nothing in it is
// trusted, and anything that is not a scope applies everything (never a partial or a malformed run).
describe('scope announcements', () => {
  it('carries a scope and reads it back', () => {
    const scope = { hosts: ['shop.example.com', '', '*.w.example.com'], http: [3, 7] };
    const payload = scopePayload(scope);
    expect(payload).not.toBeNull();
    expect(parseScopePayload(payload ?? '')).toEqual(scope);
  });

  it("carries a TCP/UDP service's instances and ids", () => {
    const scope = { hosts: [], http: [], streams: ['tcp-30005', 'udp-53'], tcp: [4] };
    expect(parseScopePayload(scopePayload(scope) ?? '')).toEqual(scope);
  });

  it("carries a node's change: its id beside its services' hosts and instances", () => {
    const scope = { hosts: ['shop.example.com'], http: [3], streams: ['tcp-30005'], tcp: [4], nodes: [2] };
    expect(parseScopePayload(scopePayload(scope) ?? '')).toEqual(scope);
    expect(parseScopePayload(scopePayload({ hosts: [], http: [], nodes: [9] }) ?? '')).toEqual({
      hosts: [],
      http: [],
      nodes: [9],
    });
  });

  it('refuses what is not a scope: another host form, an id that is no id, too much, not JSON', () => {
    for (const payload of [
      '{"h":["shop.example.com\'; drop table nodes; --"],"s":[]}',
      '{"h":["../etc"],"s":[]}',
      '{"h":[],"s":[0]}',
      '{"h":[],"s":["1"]}',
      '{"h":[],"s":[1.5]}',
      `{"h":${JSON.stringify(Array.from({ length: 101 }, (_, i) => `h${i}.example.com`))},"s":[]}`,
      '{"h":"shop.example.com","s":[]}',
      '{"h":[],"s":[],"p":["tcp-0"],"t":[1]}',
      '{"h":[],"s":[],"p":["tcp-70000"],"t":[1]}',
      '{"h":[],"s":[],"p":["sctp-80"],"t":[1]}',
      '{"h":[],"s":[],"p":["tcp-80/../../x"],"t":[1]}',
      '{"h":[],"s":[],"p":["tcp-80"],"t":[-1]}',
      '{"h":[],"s":[],"p":["tcp-80"]}',
      '{"h":[],"s":[],"n":[0]}',
      '{"h":[],"s":[],"n":["2"]}',
      '{"h":[],"s":[],"n":2}',
      'null',
      'not json',
    ])
      expect(parseScopePayload(payload), payload).toBeNull();
  });

  it('a scope too long to travel is announced as a change to everything', () => {
    const hosts = Array.from({ length: 400 }, (_, i) => `host-${i}.example.com`);
    expect(scopePayload({ hosts, http: [] })).toBeNull();
  });
});
