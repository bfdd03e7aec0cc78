import { fireEvent, screen, waitFor, within } from '@testing-library/react';
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
    fireEvent.click(screen.getByRole('button', { name: 'Send test to team-chat' }));
    await waitFor(() => expect(screen.getByText(/connection refused/)).toBeTruthy());
  });

  const hook = {
    id: 7,
    name: 'ops-hook',
    kind: 'webhook',
    enabled: true,
    events: ['backend', 'node'],
    target: 'https://hooks.example.com/…',
    hasSigningSecret: true,
    hasToken: false,
    hasPassword: false,
    email: null,
    pending: 0,
    lastAttempt: null,
    created_at: '2026-11-27T05:00:00.000Z',
    updated_at: '2026-11-27T05:00:00.000Z',
  };
  const mail = {
    ...hook,
    id: 8,
    name: 'ops-mail',
    kind: 'email',
    target: 'mail.example.com:587',
    hasSigningSecret: false,
    hasPassword: true,
    email: {
      host: 'mail.example.com',
      port: 587,
      security: 'starttls',
      username: 'postern',
      from: 'gw@example.com',
      to: ['a@example.com', 'b@example.com'],
    },
  };
  const listing = (method: string, path: string) => {
    if (path === '/api/notifications/settings')
      return { status: 200, body: { graceSeconds: 60, certificateExpiringDays: 14 } };
    if (method === 'GET' && path === '/api/notifications/channels')
      return { status: 200, body: { data: [hook, mail], page: 1, limit: 100, total: 2 } };
    if (method === 'PATCH') return { status: 200, body: hook };
    return undefined;
  };
  const patches = (calls: { method: string; path: string; body: unknown }[], id: number) =>
    calls.filter((call) => call.method === 'PATCH' && call.path === `/api/notifications/channels/${String(id)}`);

  it('edits a channel: the settings shown, the secrets never, and sent only when replaced', async () => {
    const calls = fakeApi(listing);
    renderInRouter(() => <NotificationsCard />);
    fireEvent.click(await screen.findByRole('button', { name: 'Edit ops-hook' }));
    const form = screen.getByRole('form', { name: 'Edit ops-hook' });
    expect(within(form).getByLabelText<HTMLInputElement>('Name', { exact: false }).value).toBe('ops-hook');
    expect(within(form).getByText(/https:\/\/hooks.example.com\/… \(the rest stored, never shown\)/)).toBeTruthy();
    expect(within(form).getByText(/Signing secret: stored, never shown/)).toBeTruthy();
    expect(within(form).queryByLabelText('URL', { exact: false })).toBeNull();
    expect(within(form).getByLabelText<HTMLSelectElement>('Kind').disabled).toBe(true);
    fireEvent.change(within(form).getByLabelText('Name', { exact: false }), { target: { value: 'ops-hook-2' } });
    fireEvent.click(within(form).getByLabelText('Drift found (and repaired)'));
    fireEvent.click(within(form).getByRole('button', { name: 'Save Channel' }));
    await waitFor(() => expect(patches(calls, 7)).toHaveLength(1));
    expect(patches(calls, 7)[0]?.body).toEqual({ name: 'ops-hook-2', events: ['backend', 'node', 'drift'] });

    // Replacing the URL sends it, and only it of the secrets.
    fireEvent.click(await screen.findByRole('button', { name: 'Edit ops-hook' }));
    const again = screen.getByRole('form', { name: 'Edit ops-hook' });
    fireEvent.click(within(again).getByRole('button', { name: 'Replace url' }));
    fireEvent.change(within(again).getByLabelText('URL', { exact: false }), {
      target: { value: 'https://hooks.example.com/new-path' },
    });
    fireEvent.click(within(again).getByRole('button', { name: 'Save Channel' }));
    await waitFor(() => expect(patches(calls, 7)).toHaveLength(2));
    expect(patches(calls, 7)[1]?.body).toEqual({
      name: 'ops-hook',
      events: ['backend', 'node'],
      url: 'https://hooks.example.com/new-path',
    });
  });

  it('edits an e-mail channel: the SMTP settings shown, the password replaced by nothing is removed', async () => {
    const calls = fakeApi(listing);
    renderInRouter(() => <NotificationsCard />);
    fireEvent.click(await screen.findByRole('button', { name: 'Edit ops-mail' }));
    const form = screen.getByRole('form', { name: 'Edit ops-mail' });
    expect(within(form).getByLabelText<HTMLInputElement>(/^To/).value).toBe('a@example.com, b@example.com');
    expect(within(form).getByText(/Password: stored, never shown/)).toBeTruthy();
    fireEvent.click(within(form).getByRole('button', { name: 'Replace password' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Save Channel' }));
    await waitFor(() => expect(patches(calls, 8)).toHaveLength(1));
    expect(patches(calls, 8)[0]?.body).toEqual({
      name: 'ops-mail',
      events: ['backend', 'node'],
      host: 'mail.example.com',
      port: 587,
      security: 'starttls',
      username: 'postern',
      password: null,
      from: 'gw@example.com',
      to: ['a@example.com', 'b@example.com'],
    });
  });

  it('lists the recent deliveries with their state, attempts and last error', async () => {
    fakeApi((method, path) => {
      if (path === '/api/notifications/deliveries')
        return {
          status: 200,
          body: {
            data: [
              {
                id: 12,
                channelId: 7,
                channelName: 'ops-hook',
                type: 'backend.down',
                title: 'db is down (node edge-1)',
                status: 'pending',
                attempts: 3,
                nextAttemptAt: '2026-11-27T06:05:00.000Z',
                lastError: 'hooks.example.com answered 503',
                created_at: '2026-11-27T06:00:00.000Z',
                finishedAt: null,
              },
              {
                id: 11,
                channelId: 7,
                channelName: 'ops-hook',
                type: 'node.online',
                title: 'Node edge-2 is online again after 4 min',
                status: 'sent',
                attempts: 1,
                nextAttemptAt: null,
                lastError: null,
                created_at: '2026-11-27T05:50:00.000Z',
                finishedAt: '2026-11-27T05:50:01.000Z',
              },
            ],
            page: 1,
            limit: 10,
            total: 2,
          },
        };
      return listing(method, path);
    });
    renderInRouter(() => <NotificationsCard />);
    const list = await screen.findByRole('region', { name: 'Recent deliveries' });
    expect(within(list).getByText('db is down (node edge-1)')).toBeTruthy();
    expect(within(list).getByText('Waiting')).toBeTruthy();
    expect(within(list).getByText(/3 attempts/)).toBeTruthy();
    expect(within(list).getByText('hooks.example.com answered 503')).toBeTruthy();
    expect(within(list).getByText('Sent')).toBeTruthy();
    expect(within(list).getByText(/1 attempt$|1 attempt /)).toBeTruthy();
  });
});
