import { describe, expect, it } from 'vitest';
import type { DnsProviderConfig } from '../../../model/certificates.js';
import { createAcmeDnsSolver } from './acme-dns.js';
import { createCloudflareSolver } from './cloudflare.js';
import { nsupdateScript, tsigKeyFile } from './rfc2136.js';
import { createRoute53Solver } from './route53.js';
import { challengeRecordName } from './solver.js';

// The cloud DNS providers against their documented request and response shapes, with fetch replaced (no network):
// Cloudflare API v4, Route 53 2013-04-01 (XML, SigV4), acme-dns's /update. And what reaches nsupdate: only checked
// names and values, whatever a CA or a stored row says. RFC 2136 for real: e2e/system/acme-dns.test.ts.

const RECORD = '_acme-challenge.example.com';
const VALUE = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
const SECRET = 'the-provider-secret-never-shown';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch answering each call with the next of `answers` (status, body), recording what was asked. */
function fakeFetch(answers: [number, string][]): { fetch: typeof globalThis.fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetch = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = Object.fromEntries(
      Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    seen.push({
      method: init?.method ?? 'GET',
      url: input.toString(),
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
    });
    const [status, body] = answers.shift() ?? [599, 'no answer left'];
    return Promise.resolve(new Response(body, { status }));
  };
  return { fetch: fetch as unknown as typeof globalThis.fetch, seen };
}

const provider = (kind: DnsProviderConfig['kind'], settings: DnsProviderConfig['settings']): DnsProviderConfig => ({
  id: 1,
  name: `my-${kind}`,
  kind,
  settings,
  secret: SECRET,
  propagationTimeoutSeconds: 60,
});

const findZone = () => Promise.resolve('example.com');

describe('Cloudflare', () => {
  const ok = (result: unknown): [number, string] => [200, JSON.stringify({ success: true, errors: [], result })];

  it('finds the zone by name, writes the TXT record, and deletes only that value afterwards', async () => {
    const { fetch, seen } = fakeFetch([
      ok([{ id: 'zone123', name: 'example.com' }]),
      ok({ id: 'rec1' }),
      ok([{ id: 'zone123', name: 'example.com' }]),
      ok([
        { id: 'rec1', content: `"${VALUE}"` },
        { id: 'rec2', content: '"another-order-value"' },
      ]),
      ok({ id: 'rec1' }),
    ]);
    const solver = createCloudflareSolver(provider('cloudflare', {}), { fetch, findZone });
    await solver.present(RECORD, VALUE);
    await solver.cleanup(RECORD, VALUE);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET https://api.cloudflare.com/client/v4/zones?name=example.com',
      'POST https://api.cloudflare.com/client/v4/zones/zone123/dns_records',
      'GET https://api.cloudflare.com/client/v4/zones?name=example.com',
      'GET https://api.cloudflare.com/client/v4/zones/zone123/dns_records?type=TXT&name=_acme-challenge.example.com',
      'DELETE https://api.cloudflare.com/client/v4/zones/zone123/dns_records/rec1',
    ]);
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ type: 'TXT', name: RECORD, content: `"${VALUE}"`, ttl: 60 });
    expect(seen.every((s) => s.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
  });

  it('says what Cloudflare said when it refuses, never the token', async () => {
    const { fetch } = fakeFetch([
      [
        403,
        JSON.stringify({ success: false, errors: [{ code: 10000, message: 'Authentication error' }], result: null }),
      ],
    ]);
    const solver = createCloudflareSolver(provider('cloudflare', { zoneId: 'zone123' }), { fetch, findZone });
    const error = await solver.present(RECORD, VALUE).then(
      () => new Error('no error'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toBe('DNS provider my-cloudflare: Cloudflare answered 403: Authentication error (10000)');
    expect(error.message).not.toContain(SECRET);
  });
});

describe('Route 53', () => {
  const xmlns = 'xmlns="https://route53.amazonaws.com/doc/2013-04-01/"';
  const zones = `<?xml version="1.0"?><ListHostedZonesByNameResponse ${xmlns}><HostedZones><HostedZone>
    <Id>/hostedzone/Z1D633PJN98FT9</Id><Name>example.com.</Name><CallerReference>ref</CallerReference>
    <ResourceRecordSetCount>4</ResourceRecordSetCount></HostedZone></HostedZones><DNSName>example.com</DNSName>
    <IsTruncated>false</IsTruncated><MaxItems>1</MaxItems></ListHostedZonesByNameResponse>`;
  const changeInfo = (root: string, status: string) =>
    `<?xml version="1.0"?><${root} ${xmlns}><ChangeInfo><Id>/change/C2682N5HXP0BZ4</Id><Status>${status}</Status>` +
    `<SubmittedAt>2026-11-27T00:00:00.000Z</SubmittedAt></ChangeInfo></${root}>`;

  it('finds the hosted zone, UPSERTs the record signed with SigV4, and waits for INSYNC', async () => {
    const { fetch, seen } = fakeFetch([
      [200, zones],
      [200, changeInfo('ChangeResourceRecordSetsResponse', 'PENDING')],
      [200, changeInfo('GetChangeResponse', 'PENDING')],
      [200, changeInfo('GetChangeResponse', 'INSYNC')],
    ]);
    const sleeps: number[] = [];
    const solver = createRoute53Solver(provider('route53', { accessKeyId: 'AKIAIOSFODNN7EXAMPLE' }), {
      fetch,
      findZone,
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    });
    await solver.present(RECORD, VALUE);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET https://route53.amazonaws.com/2013-04-01/hostedzonesbyname?dnsname=example.com&maxitems=1',
      'POST https://route53.amazonaws.com/2013-04-01/hostedzone/Z1D633PJN98FT9/rrset/',
      'GET https://route53.amazonaws.com/2013-04-01/change/C2682N5HXP0BZ4',
      'GET https://route53.amazonaws.com/2013-04-01/change/C2682N5HXP0BZ4',
    ]);
    expect(seen[1]?.body).toContain(
      '<Action>UPSERT</Action><ResourceRecordSet><Name>_acme-challenge.example.com.</Name><Type>TXT</Type>',
    );
    expect(seen[1]?.body).toContain(`<Value>"${VALUE}"</Value>`);
    for (const call of seen) {
      expect(call.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/route53\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/,
      );
      expect(JSON.stringify(call.headers)).not.toContain(SECRET);
    }
    expect(sleeps).toEqual([2000]);
  });

  it('names the error Route 53 gave; a record already gone is clean', async () => {
    const refused = `<ErrorResponse ${xmlns}><Error><Type>Sender</Type><Code>AccessDenied</Code>
      <Message>User is not authorized to perform route53:ChangeResourceRecordSets</Message></Error></ErrorResponse>`;
    const gone = `<InvalidChangeBatch ${xmlns}><Messages><Message>Tried to delete resource record set but it was not
      found</Message></Messages></InvalidChangeBatch>`;
    const { fetch } = fakeFetch([
      [403, refused],
      [400, gone],
    ]);
    const config = provider('route53', { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', hostedZoneId: 'Z1D633PJN98FT9' });
    const solver = createRoute53Solver(config, { fetch, findZone });
    const error = await solver.present(RECORD, VALUE).then(
      () => new Error('no error'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toMatch(/^DNS provider my-route53: Route 53 answered 403 AccessDenied: .*not authorized/);
    await expect(solver.cleanup(RECORD, VALUE)).resolves.toBeUndefined();
  });
});

describe('acme-dns', () => {
  it('updates the account subdomain with its user and key; says what acme-dns said when it refuses', async () => {
    const { fetch, seen } = fakeFetch([
      [200, JSON.stringify({ txt: VALUE })],
      [401, JSON.stringify({ error: 'forbidden' })],
    ]);
    const config = provider('acme-dns', {
      serverUrl: 'https://auth.acme-dns.example/',
      username: 'c36f50e8-4632-44f0-83fe-e070fef28a10',
      subdomain: '8e5700ea-a4bf-41c7-8a77-e990661dcc6a',
    });
    const solver = createAcmeDnsSolver(config, { fetch, findZone });
    await solver.present(RECORD, VALUE);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: 'https://auth.acme-dns.example/update',
      headers: { 'x-api-user': 'c36f50e8-4632-44f0-83fe-e070fef28a10', 'x-api-key': SECRET },
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ subdomain: '8e5700ea-a4bf-41c7-8a77-e990661dcc6a', txt: VALUE });
    await expect(solver.present(RECORD, VALUE)).rejects.toThrow(
      'DNS provider my-acme-dns: acme-dns answered 401: forbidden',
    );
  });
});

describe('what reaches nsupdate', () => {
  const config = provider('rfc2136', { server: '192.0.2.53', keyName: 'postern-key', algorithm: 'hmac-sha256' });

  it('is one checked update of one TXT record', () => {
    expect(nsupdateScript(config, 'example.com', 'add', RECORD, VALUE)).toBe(
      `server 192.0.2.53 53\nzone example.com.\nupdate add ${RECORD}. 60 IN TXT "${VALUE}"\nsend\nquit\n`,
    );
    expect(challengeRecordName('*.example.com')).toBe(RECORD);
  });

  it('refuses a line break or a quote anywhere: no second command, no other record', () => {
    const evil = '\nupdate add www.example.com. 60 IN A 192.0.2.66';
    expect(() => nsupdateScript(config, 'example.com', 'add', `${RECORD}${evil}`, VALUE)).toThrow(/refusing/);
    expect(() => nsupdateScript(config, 'example.com', 'add', RECORD, `${VALUE}"${evil}`)).toThrow(/refusing/);
    expect(() => nsupdateScript(config, `example.com${evil}`, 'add', RECORD, VALUE)).toThrow(/refusing/);
    expect(() => nsupdateScript(config, 'example.com', 'add', 'www.example.com', VALUE)).toThrow(/refusing/);
    const badServer = provider('rfc2136', { ...config.settings, server: `192.0.2.53${evil}` });
    expect(() => nsupdateScript(badServer, 'example.com', 'add', RECORD, VALUE)).toThrow(/refusing server/);
    expect(() => tsigKeyFile({ ...config, secret: 'abc";\n};\ninclude "/etc/shadow' })).toThrow(/not base64/);
    expect(() => tsigKeyFile(provider('rfc2136', { ...config.settings, keyName: 'k"; };' }))).toThrow(/key name/);
  });
});
