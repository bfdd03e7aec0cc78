import { describe, expect, it } from 'vitest';
import {
  DomainAccessUpdateSchema,
  IdentityProviderCreateSchema,
  isSafeReturnPath,
  strictnessViolations,
  type PolicyRule,
} from './access.js';
import { toFieldErrors } from './envelopes.js';

const protectedFloor: PolicyRule = {
  mode: 'protected',
  providerId: 1,
  allowEmails: ['boss@other.test'],
  allowEmailDomains: ['corp.test'],
  allowGroups: ['ops'],
  hasPassword: false,
  shareLinks: false,
  bypassPaths: ['/hooks'],
  bypassNetworks: ['10.0.0.0/8'],
  sessionSeconds: 3600,
};

const fieldsOf = (child: Partial<PolicyRule>, floor: PolicyRule | null = protectedFloor) =>
  strictnessViolations({ ...protectedFloor, ...child }, floor).map((v) => v.field);

describe('only stricter (a node token on its own service)', () => {
  it('lets anything stand under a public floor or no domain policy', () => {
    expect(fieldsOf({ mode: 'public' }, null)).toEqual([]);
    expect(fieldsOf({ hasPassword: true, shareLinks: true }, { ...protectedFloor, mode: 'public' })).toEqual([]);
  });

  it('accepts the floor itself and every narrowing of it', () => {
    expect(fieldsOf({})).toEqual([]);
    expect(
      fieldsOf({
        allowEmails: ['ann@corp.test', 'boss@other.test'],
        allowEmailDomains: [],
        allowGroups: [],
        bypassPaths: ['/hooks/github'],
        bypassNetworks: ['10.1.0.0/16', '10.2.3.4'],
        sessionSeconds: 600,
      }),
    ).toEqual([]);
  });

  it('refuses every widening, naming the field', () => {
    expect(fieldsOf({ mode: 'public' })).toEqual(['mode']);
    expect(fieldsOf({ providerId: 2 })).toEqual(['providerId']);
    expect(fieldsOf({ allowEmails: ['eve@evil.test'] })).toEqual(['allowEmails']);
    expect(fieldsOf({ allowEmailDomains: ['evil.test'] })).toEqual(['allowEmailDomains']);
    expect(fieldsOf({ allowGroups: ['everyone'] })).toEqual(['allowGroups']);
    expect(fieldsOf({ hasPassword: true })).toEqual(['password']);
    expect(fieldsOf({ shareLinks: true })).toEqual(['shareLinks']);
    expect(fieldsOf({ bypassPaths: ['/'] })).toEqual(['bypassPaths']);
    // `/hooksx` is not below `/hooks`.
    expect(fieldsOf({ bypassPaths: ['/hooksx'] })).toEqual(['bypassPaths']);
    expect(fieldsOf({ bypassNetworks: ['0.0.0.0/0'] })).toEqual(['bypassNetworks']);
    expect(fieldsOf({ bypassNetworks: ['11.0.0.1'] })).toEqual(['bypassNetworks']);
    expect(fieldsOf({ sessionSeconds: 7200 })).toEqual(['sessionSeconds']);
  });
});

describe('return addresses after sign-in', () => {
  it('are paths on the same host, nothing else', () => {
    for (const good of ['/', '/dashboard?x=1&y=%2F', '/a/b#frag', '/%2F%2Fevil.example'])
      expect(isSafeReturnPath(good), good).toBe(true);
    for (const bad of [
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      'https:%2F%2Fevil.example',
      '%2F%2Fevil.example',
      '/ok\r\nSet-Cookie: x',
      '/a b',
      'javascript:alert(1)',
      '',
    ])
      expect(isSafeReturnPath(bad), bad).toBe(false);
  });
});

describe('policy and provider requests', () => {
  it('say which field is wrong', () => {
    const result = DomainAccessUpdateSchema.safeParse({
      mode: 'closed',
      allowEmails: ['not-an-email'],
      allowEmailDomains: ['no_domain'],
      allowGroups: ['a,b'],
      password: '12345',
      bypassPaths: ['no-slash'],
      bypassNetworks: ['10.0.0.5/8'],
      sessionSeconds: 10,
      shareLinks: 'yes',
      providerId: 'x',
    });
    expect(result.success).toBe(false);
    const fields = result.success ? [] : toFieldErrors(result.error).map((e) => e.field);
    expect(fields.sort()).toEqual(
      [
        'mode',
        'allowEmails',
        'allowEmailDomains',
        'allowGroups',
        'password',
        'bypassPaths',
        'bypassNetworks',
        'sessionSeconds',
        'shareLinks',
        'providerId',
      ].sort(),
    );
  });

  it('normalise lists (case, trailing slashes, duplicates) and keep absent fields absent', () => {
    const parsed = DomainAccessUpdateSchema.parse({
      allowEmails: ['Ann@Corp.Test', 'ann@corp.test'],
      bypassPaths: ['/hooks/'],
    });
    expect(parsed).toEqual({ allowEmails: ['ann@corp.test'], bypassPaths: ['/hooks'] });
  });

  it('take only https issuers', () => {
    for (const issuer of ['http://idp.test', 'https://user:pw@idp.test', 'ftp://idp.test', 'not a url'])
      expect(IdentityProviderCreateSchema.safeParse({ name: 'x', issuer, clientId: 'c' }).success, issuer).toBe(false);
    expect(
      IdentityProviderCreateSchema.parse({ name: 'kc', issuer: 'https://kc.test/realms/main/', clientId: 'postern' })
        .issuer,
    ).toBe('https://kc.test/realms/main');
  });
});
