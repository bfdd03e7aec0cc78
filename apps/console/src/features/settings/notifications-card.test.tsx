import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { NotificationsCard } from './notifications-card';

const fill = (label: string, value: string) =>
  fireEvent.change(screen.getByLabelText(label, { exact: false }), { target: { value } });

describe('Settings → Notifications', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('sends only the fields of the kind chosen, and shows the server’s field message', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/notifications/settings')
        return { status: 200, body: { graceSeconds: 60, certificateExpiringDays: 14 } };
      if (method === 'POST' && path === '/api/notifications/channels')
        return {
          status: 422,
          body: {
            message: 'Validation failed',
            code: 'validation',
            errors: { body: [{ field: 'url', message: 'This address is refused' }] },
          },
        };
      return undefined;
    });
    renderInRouter(() => <NotificationsCard />);
    fireEvent.click(await screen.findByRole('button', { name: 'Add Channel' }));
    fill('Name', 'ops');
    fill('URL', 'http://127.0.0.1/hook');
    fill('Signing secret', 'a-signing-secret-1234');
    fireEvent.click(screen.getByRole('button', { name: 'Save Channel' }));
    expect(await screen.findByText('This address is refused')).toBeTruthy();
    const sent = calls.find((call) => call.method === 'POST' && call.path === '/api/notifications/channels');
    expect(sent?.body).toMatchObject({ kind: 'webhook', name: 'ops', url: 'http://127.0.0.1/hook' });
    expect(Object.keys(sent?.body as object)).not.toContain('host');
  });

  it('lists channels without secrets and says what "send test" got back', async () => {
    fakeApi((method, path) => {
      if (path === '/api/notifications/settings')
        return { status: 200, body: { graceSeconds: 60, certificateExpiringDays: 14 } };
      if (method === 'GET' && path === '/api/notifications/channels')
        return {
          status: 200,
          body: {
            data: [
              {
                id: 3,
                name: 'team-chat',
                kind: 'slack',
                enabled: true,
                events: ['backend'],
                target: 'https://hooks.slack.com/…',
                hasSigningSecret: false,
                hasToken: false,
                hasPassword: false,
                email: null,
                pending: 2,
                lastAttempt: { at: '2026-11-27T06:00:00.000Z', ok: false, error: 'hooks.slack.com answered 404' },
                created_at: '2026-11-27T05:00:00.000Z',
                updated_at: '2026-11-27T05:00:00.000Z',
              },
            ],
            page: 1,
            limit: 100,
            total: 1,
          },
        };
      if (method === 'POST' && path === '/api/notifications/channels/3/test')
        return { status: 200, body: { ok: false, message: 'The test message was not delivered: connection refused' } };
      return undefined;
    });
    renderInRouter(() => <NotificationsCard />);
    expect(await screen.findByText('team-chat')).toBeTruthy();
    expect(screen.getByText('https://hooks.slack.com/…')).toBeTruthy();
    expect(screen.getByText('2 waiting')).toBeTruthy();
    expect(screen.getByText(/Last delivery failed: hooks.slack.com answered 404/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Send Test' }));
    await waitFor(() => expect(screen.getByText(/connection refused/)).toBeTruthy());
  });
});
