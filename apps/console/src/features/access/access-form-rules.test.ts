import { accessMessages, messages, type ServiceAccess } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import {
  domainAccessValues,
  formatDuration,
  isAccessChanged,
  serviceAccessValues,
  sessionOptions,
  toAccessBody,
  validateAccessForm,
  type AccessFormContext,
  type AccessFormValues,
} from './access-form-rules';
import { buildPolicy } from './access-test-fixtures';
import { describePolicy, describeSource } from './policy-summary';

const domainContext: AccessFormContext = { kind: 'domain', isPasswordSet: false, hasDomain: true };
const serviceContext: AccessFormContext = { kind: 'service', isPasswordSet: false, hasDomain: true };
const protectedValues = (overrides: Partial<AccessFormValues> = {}): AccessFormValues => ({
  ...domainAccessValues(buildPolicy()),
  ...overrides,
});

describe('access form values and body', () => {
  it('starts a new domain public and a new service inheriting, and sends nothing for them', () => {
    expect(domainAccessValues(null).mode).toBe('public');
    expect(serviceAccessValues(null).mode).toBe('inherit');
    expect(isAccessChanged(serviceAccessValues(null), serviceAccessValues(null))).toBe(false);
  });

  it('sends the mode alone for inherit and public, every field for protected', () => {
    expect(toAccessBody({ ...protectedValues(), mode: 'inherit' })).toEqual({ mode: 'inherit' });
    expect(toAccessBody({ ...protectedValues(), mode: 'public' })).toEqual({ mode: 'public' });
    expect(toAccessBody(protectedValues())).toEqual({
      mode: 'protected',
      providerId: 3,
      allowEmails: ['alice@example.com'],
      allowEmailDomains: [],
      allowGroups: [],
      shareLinks: false,
      bypassPaths: [],
      bypassNetworks: [],
      sessionSeconds: 86_400,
    });
  });

  it('sends the password only when it is set or removed (write-only: absent keeps it)', () => {
    expect(toAccessBody(protectedValues())).not.toHaveProperty('password');
    expect(toAccessBody(protectedValues({ passwordAction: 'set', password: '246810' })).password).toBe('246810');
    expect(toAccessBody(protectedValues({ passwordAction: 'remove' })).password).toBeNull();
    const initial = protectedValues();
    expect(isAccessChanged(protectedValues({ passwordAction: 'remove' }), initial)).toBe(true);
    expect(isAccessChanged(protectedValues({ allowEmails: ['bob@example.com'] }), initial)).toBe(true);
    expect(isAccessChanged(protectedValues(), initial)).toBe(false);
  });

  it("takes a service's own policy, or inherit when it has none", () => {
    const access: ServiceAccess = {
      serviceId: 9,
      nodeId: 4,
      domain: 'app.example.com',
      mode: 'protected',
      own: buildPolicy({ shareLinks: true, providerId: null, providerName: null }),
      setBy: 'admin',
      domainPolicy: buildPolicy({ mode: 'public' }),
      effective: { ...buildPolicy({ shareLinks: true }), source: 'service' },
    };
    expect(serviceAccessValues(access)).toMatchObject({ mode: 'protected', providerId: '', shareLinks: true });
    expect(serviceAccessValues({ ...access, mode: 'inherit', own: null }).mode).toBe('inherit');
  });
});

describe('access form checks (the server says the same)', () => {
  it('needs a way in when protected', () => {
    const values = protectedValues({ providerId: '', allowEmails: [] });
    expect(validateAccessForm(values, domainContext)).toEqual({ mode: accessMessages.noWayIn });
    // A stored password, a new one, or share links are each a way in; removing the stored one is not.
    expect(validateAccessForm(values, { ...domainContext, isPasswordSet: true })).toEqual({});
    expect(validateAccessForm({ ...values, shareLinks: true }, domainContext)).toEqual({});
    expect(validateAccessForm({ ...values, passwordAction: 'set', password: '123456' }, domainContext)).toEqual({});
    expect(
      validateAccessForm({ ...values, passwordAction: 'remove' }, { ...domainContext, isPasswordSet: true }),
    ).toEqual({ mode: accessMessages.noWayIn });
  });

  it('needs someone on the lists when single sign-on is on', () => {
    expect(validateAccessForm(protectedValues({ allowEmails: [] }), domainContext)).toEqual({
      allowEmails: accessMessages.noAllowList,
    });
    expect(validateAccessForm(protectedValues({ allowEmails: [], allowGroups: ['ops'] }), domainContext)).toEqual({});
  });

  it('names the entry of a list that is wrong', () => {
    const errors = validateAccessForm(
      protectedValues({ allowEmails: ['alice@example.com', 'bob@'], bypassNetworks: ['10.0.0.5/8'] }),
      domainContext,
    );
    expect(errors.allowEmails).toBe(`bob@: ${messages.email}`);
    expect(errors.bypassNetworks).toMatch(/^10\.0\.0\.5\/8: /);
  });

  it('asks for the new password and its length', () => {
    expect(validateAccessForm(protectedValues({ passwordAction: 'set', password: '' }), domainContext)).toEqual({
      password: messages.required,
    });
    expect(
      validateAccessForm(protectedValues({ passwordAction: 'set', password: '12345' }), domainContext).password,
    ).toBe('This field must be at least 6 characters long');
  });

  it("refuses a service's protected policy without a domain, and checks nothing when it inherits", () => {
    expect(validateAccessForm(protectedValues(), { ...serviceContext, hasDomain: false })).toEqual({
      mode: accessMessages.needsDomain,
    });
    expect(validateAccessForm({ ...protectedValues({ allowEmails: [] }), mode: 'inherit' }, serviceContext)).toEqual(
      {},
    );
  });
});

describe('words for policies and session lengths', () => {
  it('says a duration in its largest whole unit', () => {
    expect(formatDuration(300)).toBe('5 minutes');
    expect(formatDuration(3600)).toBe('1 hour');
    expect(formatDuration(86_400)).toBe('24 hours');
    expect(formatDuration(7 * 86_400)).toBe('7 days');
    expect(formatDuration(5400)).toBe('90 minutes');
  });

  it('offers the presets and keeps a stored length that is none of them', () => {
    expect(sessionOptions('86400').map((option) => option.value)).toContain('86400');
    expect(sessionOptions('5400').map((option) => option.label)).toContain('90 minutes');
  });

  it('describes a policy one way in per line', () => {
    expect(describePolicy(buildPolicy({ mode: 'public' }))).toEqual(['Public: anyone can reach it']);
    expect(
      describePolicy(
        buildPolicy({ passwordSet: true, shareLinks: true, bypassPaths: ['/hook'], sessionSeconds: 3600 }),
      ),
    ).toEqual([
      'Single sign-on with Keycloak (1 email)',
      'Password or PIN',
      'Share links',
      'No check below /hook',
      'Sessions last 1 hour',
    ]);
  });

  it("says where a service's policy comes from, also when its token's own policy no longer counts", () => {
    const base: ServiceAccess = {
      serviceId: 9,
      nodeId: 4,
      domain: 'app.example.com',
      mode: 'inherit',
      own: null,
      setBy: null,
      domainPolicy: buildPolicy(),
      effective: { ...buildPolicy(), source: 'domain' },
    };
    expect(describeSource(base)).toBe('Inherited from app.example.com');
    expect(describeSource({ ...base, mode: 'protected', own: buildPolicy(), setBy: 'node' })).toMatch(
      /^The policy of app\.example\.com: the service's own policy, set by its node's token, lets in more/,
    );
    expect(describeSource({ ...base, domain: null, effective: { ...base.effective, source: 'none' } })).toBe(
      'No domain: services without one are always public',
    );
  });
});
