import { describe, expect, it } from 'vitest';
import { createGatewayReach, urlHost } from './reach.js';

describe('what the gateway reaches through its settings', () => {
  it('names the database, resolvers, ACME directory and metadata addresses, names resolved, no URL secrets', async () => {
    const asked: string[] = [];
    const reach = createGatewayReach({
      resolvers: ['10.53.0.53'],
      databaseHost: urlHost('postgres://postern:hunter2-secret@DB.internal:5432/postern'),
      acmeDirectoryUrl: 'https://acme.internal:14000/dir',
      staticHosts: () => new Map([['acme.internal', '10.60.0.3']]),
      lookup: (name) => {
        asked.push(name);
        return Promise.resolve(name === 'db.internal' ? ['10.40.0.9', '10.40.0.10'] : []);
      },
    });
    const found = await reach.destinations();
    expect(found.filter((d) => d.kind === 'setting')).toEqual([
      { address: '10.40.0.9', what: 'the database host db.internal (POSTERN_DATABASE_URL)', kind: 'setting' },
      { address: '10.40.0.10', what: 'the database host db.internal (POSTERN_DATABASE_URL)', kind: 'setting' },
      { address: '10.53.0.53', what: 'a DNS resolver (POSTERN_RESOLVERS or /etc/resolv.conf)', kind: 'setting' },
      { address: '10.60.0.3', what: 'the ACME directory host acme.internal (POSTERN_ACME_DIRECTORY)', kind: 'setting' },
    ]);
    expect(found.map((d) => d.address)).toEqual(expect.arrayContaining(['169.254.169.254', '100.100.100.200']));
    expect(JSON.stringify(found)).not.toContain('hunter2');
    // /etc/hosts and addresses are not asked of DNS; an answer is kept.
    expect(asked).toEqual(['db.internal']);
    await reach.destinations();
    expect(asked).toEqual(['db.internal']);
  });

  it('answers what it knows without waiting, and asks for the rest in the background', async () => {
    let answer: (addresses: string[]) => void = () => undefined;
    const reach = createGatewayReach({
      resolvers: [],
      staticHosts: () => new Map(),
      lookup: () => new Promise((resolve) => (answer = resolve)),
    });
    expect(reach.known('app.internal')).toEqual([]);
    answer(['10.21.0.9']);
    expect(await reach.resolve('app.internal')).toEqual(['10.21.0.9']);
    expect(reach.known('APP.internal')).toEqual(['10.21.0.9']);
    expect(reach.known('10.1.2.3')).toEqual(['10.1.2.3']);
  });

  it('a name that does not resolve, or a failing lookup, is no address', async () => {
    const reach = createGatewayReach({
      resolvers: [],
      staticHosts: () => new Map(),
      lookup: () => Promise.reject(new Error('SERVFAIL')),
    });
    expect(await reach.resolve('gone.internal')).toEqual([]);
    expect(urlHost('postgres:///postern?host=/run/postgresql')).toBeUndefined();
    expect(urlHost('not a url')).toBeUndefined();
  });
});
