import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { PASSWORDS_DIFFER_MESSAGE, PasswordCard } from './password-card';

const fill = (label: string, value: string) =>
  fireEvent.change(screen.getByLabelText(label, { exact: true }), { target: { value } });
const submit = () => fireEvent.click(screen.getByRole('button', { name: 'Change password' }));

describe('password change', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('checks the new password twice before asking the server, with the spec’s length message', async () => {
    const calls = fakeApi();
    renderInRouter(() => <PasswordCard />);
    await screen.findByRole('button', { name: 'Change password' });
    fill('Current password', 'old-password-1');
    fill('New password', 'short');
    fill('Repeat the new password', 'short');
    submit();
    expect(await screen.findByText('This field must be at least 12 characters long')).toBeTruthy();
    fill('New password', 'a-long-enough-password');
    fill('Repeat the new password', 'a-long-enough-passwort');
    submit();
    expect(await screen.findByText(PASSWORDS_DIFFER_MESSAGE)).toBeTruthy();
    expect(calls.filter((call) => call.path === '/api/auth/password')).toEqual([]);
  });

  it('sends the contract’s PATCH with the current and new password only, and shows the server’s field message', async () => {
    const calls = fakeApi((method, path) =>
      method === 'PATCH' && path === '/api/auth/password'
        ? {
            status: 422,
            body: {
              message: 'Validation failed',
              code: 'validation',
              errors: { body: [{ field: 'currentPassword', message: 'The current password is not correct' }] },
            },
          }
        : undefined,
    );
    renderInRouter(() => <PasswordCard />);
    await screen.findByRole('button', { name: 'Change password' });
    fill('Current password', 'wrong-password');
    fill('New password', 'a-long-enough-password');
    fill('Repeat the new password', 'a-long-enough-password');
    submit();
    expect(await screen.findByText('The current password is not correct')).toBeTruthy();
    const sent = calls.find((call) => call.path === '/api/auth/password');
    expect(sent?.method).toBe('PATCH');
    expect(sent?.body).toEqual({ currentPassword: 'wrong-password', newPassword: 'a-long-enough-password' });
  });

  it('empties the form after a change', async () => {
    fakeApi((method, path) => (method === 'PATCH' && path === '/api/auth/password' ? { status: 204 } : undefined));
    renderInRouter(() => <PasswordCard />);
    await screen.findByRole('button', { name: 'Change password' });
    fill('Current password', 'old-password-1');
    fill('New password', 'a-long-enough-password');
    fill('Repeat the new password', 'a-long-enough-password');
    submit();
    await waitFor(() => expect(screen.getByLabelText<HTMLInputElement>('Current password').value).toBe(''));
  });
});
