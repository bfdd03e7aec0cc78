import { ACME_DIRECTORY_PRESETS, certificateMessages } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { collectErrors } from '../../lib/use-zod-form';
import { applyPreset, getInitialAcmeCaValues, makeAcmeCaFormSchema, showsEab } from './acme-ca-form-rules';
import { getInitialDnsProviderValues, makeDnsProviderFormSchema, toDnsProviderBody } from './dns-provider-form-rules';

describe('the DNS provider form', () => {
  it("sends the chosen kind's settings only, empty ones as null, numbers as numbers, and the secret when typed", () => {
    const values = {
      ...getInitialDnsProviderValues(),
      name: 'bind',
      server: 'ns1.example.com',
      port: '5353',
      keyName: 'postern',
      zoneId: 'left-from-another-kind',
      secret: 'c2VjcmV0',
    };
    expect(toDnsProviderBody(values)).toEqual({
      name: 'bind',
      kind: 'rfc2136',
      server: 'ns1.example.com',
      port: 5353,
      keyName: 'postern',
      algorithm: 'hmac-sha256',
      zone: null,
      propagationTimeoutSeconds: null,
      secret: 'c2VjcmV0',
    });
  });

  it('needs the secret on create, keeps the stored one on an edit that leaves it empty', () => {
    const values = { ...getInitialDnsProviderValues(), name: 'cf', kind: 'cloudflare' as const };
    expect(collectErrors(makeDnsProviderFormSchema(false), values)).toEqual({ secret: 'This field is required' });
    const edit = makeDnsProviderFormSchema(true).parse(values);
    expect(edit).not.toHaveProperty('secret');
    expect(edit).not.toHaveProperty('kind');
  });
});

describe('the certificate authority form', () => {
  it("a preset fills its name and URL; ZeroSSL and Google show the external account binding, Let's Encrypt not", () => {
    const zerossl = ACME_DIRECTORY_PRESETS.find((preset) => preset.key === 'zerossl');
    expect(applyPreset('zerossl')).toEqual({ preset: 'zerossl', name: zerossl?.name, directoryUrl: zerossl?.url });
    expect(showsEab({ preset: 'zerossl', eabKeyId: '' })).toBe(true);
    expect(showsEab({ preset: 'letsencrypt', eabKeyId: '' })).toBe(false);
    expect(showsEab({ preset: 'custom', eabKeyId: '' })).toBe(true);
  });

  it('refuses a key id without its HMAC key on that field; an edit without a new key keeps the stored one', () => {
    const values = { ...getInitialAcmeCaValues(), ...applyPreset('google'), eabKeyId: 'kid' };
    expect(collectErrors(makeAcmeCaFormSchema(false), values)).toEqual({ eabHmacKey: certificateMessages.eabPair });
    expect(makeAcmeCaFormSchema(true).parse(values)).not.toHaveProperty('eabHmacKey');
    expect(makeAcmeCaFormSchema(true).parse({ ...values, eabKeyId: '' })).toMatchObject({ eabHmacKey: null });
  });
});
