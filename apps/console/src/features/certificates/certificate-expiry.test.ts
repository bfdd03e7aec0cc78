import { describe, expect, it } from 'vitest';
import { uploadedExpiryWarning } from './certificate-expiry';

const now = new Date('2026-11-27T12:00:00Z');
const endingIn = (days: number) => ({ notAfter: new Date(now.getTime() + days * 86_400_000).toISOString() });

describe('uploadedExpiryWarning', () => {
  it('warns about an uploaded certificate from 30 days before its end, and after it', () => {
    expect(uploadedExpiryWarning('uploaded', endingIn(31), now)).toBeNull();
    expect(uploadedExpiryWarning('uploaded', endingIn(30), now)).toMatch(/^Expires in 30 days \(.+\): upload a new/);
    expect(uploadedExpiryWarning('uploaded', endingIn(0.5), now)).toMatch(/^Expires in 1 day /);
    expect(uploadedExpiryWarning('uploaded', endingIn(-2), now)).toMatch(/^Expired on .+: upload a new certificate$/);
  });

  it('says nothing about certificates a CA renews, or without an end date', () => {
    expect(uploadedExpiryWarning('certbot', endingIn(3), now)).toBeNull();
    expect(uploadedExpiryWarning('self-signed', endingIn(-3), now)).toBeNull();
    expect(uploadedExpiryWarning('uploaded', { notAfter: null }, now)).toBeNull();
    expect(uploadedExpiryWarning('uploaded', null, now)).toBeNull();
  });
});
