import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { expectPath, expectVisible, useConsoleHarness } from './fixture.js';
import { ADMIN } from './server.js';

// Two-factor sign-in: enrolment in Settings (QR code, secret, a code to confirm, recovery codes shown
// once) and the second step of the sign-in screen. Codes are made here from the secret the page showed.

/** The code for the step after now: accepted (one step of drift) and later than the step spent at enrolment. */
const nextCode = (secret: string): string =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: Date.now() + 30_000,
  });
const currentCode = (secret: string): string =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();

describe('two-factor sign-in', () => {
  const harness = useConsoleHarness();

  it('enrols from Settings, then signs in with the password and a code, or with a recovery code', async () => {
    const page = await harness.openPage('/');
    await page.getByRole('link', { name: 'Settings' }).click();
    await expectPath(page, '/settings');
    await expectVisible(page.getByText('Off', { exact: true }));

    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await expectVisible(qr);
    // The QR code is an image the browser decoded (the CSP allows data: images), not a broken one.
    expect(await qr.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    const secret = await page.getByRole('textbox', { name: 'Secret', exact: true }).inputValue();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    await page.getByLabel('Code from the app').fill('000000' === currentCode(secret) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expectVisible(page.getByText('The code is not correct'));
    await page.getByLabel('Code from the app').fill(currentCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();

    const list = page.getByRole('list', { name: 'Recovery codes' });
    await expectVisible(list);
    const codes = (await list.getByRole('listitem').allTextContents()).map((code) => code.trim());
    expect(codes).toHaveLength(10);
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await expectVisible(page.getByText('On', { exact: true }));
    await expectVisible(page.getByText('Recovery codes left: 10.'));
    expect(await page.content()).not.toContain(secret);

    // Sign-in now takes two steps.
    const login = await harness.openPage('/login', { isSignedIn: false });
    await login.getByLabel('Username').fill(ADMIN.username);
    await login.getByLabel('Password').fill(ADMIN.password);
    await login.getByRole('button', { name: 'Sign in' }).click();
    const code = login.getByLabel('Authentication code');
    await expectVisible(code);
    await code.fill('12345x');
    await login.getByRole('button', { name: 'Verify' }).click();
    await expectVisible(login.getByRole('alert').filter({ hasText: 'Invalid authentication code' }));
    await code.fill(nextCode(secret));
    await login.getByRole('button', { name: 'Verify' }).click();
    await expectPath(login, '/');

    // A recovery code signs in once.
    const withRecovery = await harness.openPage('/login', { isSignedIn: false });
    await withRecovery.getByLabel('Username').fill(ADMIN.username);
    await withRecovery.getByLabel('Password').fill(ADMIN.password);
    await withRecovery.getByRole('button', { name: 'Sign in' }).click();
    await withRecovery.getByLabel('Authentication code').fill(codes[0] ?? '');
    await withRecovery.getByRole('button', { name: 'Verify' }).click();
    await expectPath(withRecovery, '/');
    await withRecovery.goto('/settings');
    await expectVisible(withRecovery.getByText('Recovery codes left: 9.'));
  });
});
