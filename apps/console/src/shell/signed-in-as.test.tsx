import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { activateLanguage } from '../i18n/i18n';
import { SignedInAs } from './signed-in-as';

const account = vi.hoisted(() => ({ via: 'password' }));
vi.mock('../queries/account', () => ({
  useCurrentAccount: () => ({ data: { username: 'admin', role: 'admin', via: account.via } }),
}));

afterEach(() => activateLanguage('en'));

/** The tooltip of "Signed in as …" for a session that signed in `via` (the server's words). */
function titleFor(via: string): string | null {
  account.via = via;
  const { unmount } = render(<SignedInAs />);
  const title = screen.getByText('admin').parentElement?.getAttribute('title') ?? null;
  unmount();
  return title;
}

describe('how the session signed in', () => {
  it('says it as the server does in English and in the language otherwise, the provider as named', async () => {
    expect(titleFor('password')).toBe('Signed in with password');
    expect(titleFor('single sign-on (Corp IdP) + recovery code')).toBe(
      'Signed in with single sign-on (Corp IdP) + recovery code',
    );
    await activateLanguage('de');
    expect(titleFor('password + authentication code')).toBe('Angemeldet über Passwort + Authentifizierungscode');
    await activateLanguage('ja');
    expect(titleFor('single sign-on (Corp IdP)')).toBe('シングルサインオン（Corp IdP） でサインイン');
    // A way of signing in the console does not know yet is shown as sent.
    expect(titleFor('passkey')).toBe('passkey でサインイン');
  });
});
