import type { Certificate } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { summarizeCertificate } from './certificate-summary';

const now = new Date('2026-11-22T12:00:00Z');
const certificate = (overrides: Partial<Certificate>): Certificate => ({
  state: 'valid',
  issuer: "(STAGING) Let's Encrypt",
  notBefore: '2026-11-01T00:00:00Z',
  notAfter: '2027-01-30T12:00:00Z',
  fingerprint: 'AB:CD',
  error: null,
  ...overrides,
});

describe('summarizeCertificate', () => {
  it("reports a valid Let's Encrypt certificate with its end date", () => {
    expect(summarizeCertificate({ ssl: 'certbot', certificate: certificate({}) }, now)).toMatchObject({
      modeLabel: "Let's Encrypt",
      stateLabel: 'Valid',
      tone: 'green',
      validUntil: '01/30/2027',
    });
  });

  it('says when there is no certificate yet', () => {
    expect(summarizeCertificate({ ssl: 'certbot', certificate: null }, now)).toMatchObject({
      stateLabel: 'No certificate yet',
      validUntil: null,
    });
  });

  it('passes the reason of a failed issuance on', () => {
    const summary = summarizeCertificate(
      { ssl: 'certbot', certificate: certificate({ state: 'failed', notAfter: null, error: 'DNS problem' }) },
      now,
    );
    expect(summary).toMatchObject({ stateLabel: 'Failed', tone: 'red', detail: 'DNS problem', validUntil: null });
  });

  it("names a self-signed stand-in under Let's Encrypt, and a self-signed certificate as active", () => {
    const selfSigned = certificate({ state: 'self-signed' });
    expect(summarizeCertificate({ ssl: 'certbot', certificate: selfSigned }, now).stateLabel).toBe('Self-signed');
    expect(summarizeCertificate({ ssl: 'self-signed', certificate: selfSigned }, now)).toMatchObject({
      modeLabel: 'Self-signed',
      stateLabel: 'Active',
    });
  });

  it('marks a certificate past its end date as expired whatever its stored state', () => {
    const summary = summarizeCertificate(
      { ssl: 'self-signed', certificate: certificate({ state: 'self-signed', notAfter: '2026-11-21T00:00:00Z' }) },
      now,
    );
    expect(summary).toMatchObject({ modeLabel: 'Self-signed', stateLabel: 'Expired', tone: 'red' });
  });

  it('shows no end date for a pending certificate (the date would be its stand-in’s), nor calls it expired', () => {
    for (const notAfter of ['2028-01-01T00:00:00Z', '2026-11-01T00:00:00Z']) {
      expect(
        summarizeCertificate({ ssl: 'certbot', certificate: certificate({ state: 'pending', notAfter }) }, now),
      ).toEqual({ modeLabel: "Let's Encrypt", stateLabel: 'Pending', tone: 'gray', validUntil: null, detail: null });
    }
  });
});
