import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryChallenges } from '../offline.js';
import { checkDomainPointsHere, type Resolver } from './domain-check.js';

const records: Record<string, { a?: string[]; aaaa?: string[] }> = {
  'app.example.com': { a: ['203.0.113.7'] },
  'gw.example.com': { a: ['203.0.113.7'], aaaa: ['2001:db8::7'] },
  'v6.example.com': { aaaa: ['2001:db8::7'] },
  'elsewhere.example.com': { a: ['198.51.100.9'] },
};

function noData(host: string): Error {
  return Object.assign(new Error(`queryA ENODATA ${host}`), { code: 'ENODATA' });
}

const resolver: Resolver = {
  resolve4: (host) => (records[host]?.a ? Promise.resolve(records[host].a) : Promise.reject(noData(host))),
  resolve6: (host) => (records[host]?.aaaa ? Promise.resolve(records[host].aaaa) : Promise.reject(noData(host))),
};

const refuseEverything: typeof fetch = () => Promise.reject(new TypeError('fetch failed'));

let challenges: MemoryChallenges;
beforeEach(() => {
  challenges = new MemoryChallenges();
});

describe('checkDomainPointsHere', () => {
  it('accepts a domain whose A record is the public IP', async () => {
    const result = await checkDomainPointsHere('app.example.com', {
      publicHost: '203.0.113.7',
      httpPort: 80,
      challenges,
      resolver,
      fetch: refuseEverything,
    });
    expect(result).toEqual({ ok: true });
  });

  it('compares against the addresses of a public host name, IPv6 included', async () => {
    const result = await checkDomainPointsHere('v6.example.com', {
      publicHost: 'gw.example.com',
      httpPort: 80,
      challenges,
      resolver,
      fetch: refuseEverything,
    });
    expect(result).toEqual({ ok: true });
  });

  it('refuses a domain pointing elsewhere, saying where it points and what was expected', async () => {
    const result = await checkDomainPointsHere('elsewhere.example.com', {
      publicHost: '203.0.113.7',
      httpPort: 80,
      challenges,
      resolver,
      fetch: refuseEverything,
    });
    expect(result).toEqual({
      ok: false,
      message: 'elsewhere.example.com does not point to this gateway (resolves to 198.51.100.9, expected 203.0.113.7)',
    });
  });

  it('refuses a domain without DNS records and asks nothing over HTTP', async () => {
    let fetched = false;
    const result = await checkDomainPointsHere('missing.example.com', {
      publicHost: '203.0.113.7',
      httpPort: 80,
      challenges,
      resolver,
      fetch: () => {
        fetched = true;
        return Promise.reject(new Error('unexpected'));
      },
    });
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining('missing.example.com has no DNS A/AAAA record') as string,
    });
    expect(fetched).toBe(false);
  });

  it('accepts a domain behind a proxy when the token handed to nginx comes back through it', async () => {
    const urls: string[] = [];
    // Plays the proxy in front of the gateway: serves whatever the gateway handed nginx to answer.
    const throughProxy: typeof fetch = (input) => {
      const url = input as string;
      urls.push(url);
      const token = url.split('/').pop() ?? '';
      return Promise.resolve(new Response(challenges.answers.get(token) ?? 'none', { status: 200 }));
    };
    const result = await checkDomainPointsHere('elsewhere.example.com', {
      publicHost: '203.0.113.7',
      httpPort: 8080,
      challenges,
      resolver,
      fetch: throughProxy,
    });
    expect(result).toEqual({ ok: true });
    expect(urls[0]).toMatch(
      /^http:\/\/elsewhere\.example\.com:8080\/\.well-known\/acme-challenge\/postern-check-[0-9a-f]{32}$/,
    );
    expect(challenges.answers.size).toBe(0); // token removed afterwards
  });

  it('refuses when the domain answers HTTP with something else than the token', async () => {
    const otherSite: typeof fetch = () => Promise.resolve(new Response('<html>parked</html>', { status: 200 }));
    const result = await checkDomainPointsHere('elsewhere.example.com', {
      publicHost: '203.0.113.7',
      httpPort: 80,
      challenges,
      resolver,
      fetch: otherSite,
    });
    expect(result.ok).toBe(false);
  });
});
