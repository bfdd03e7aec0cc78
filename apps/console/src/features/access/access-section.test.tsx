import { accessMessages, type Domain } from '@postern/contract';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dismissToast, getToasts } from '../../lib/toast-store';
import { DomainFormDialog } from '../domains/domain-form-dialog';
import { HttpServiceFormDialog } from '../services/service-form-dialogs';
import { buildHttpService, fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { buildNode } from '../../test/fixtures';
import { buildPolicy, buildProvider, buildServiceAccess, PUBLIC_POLICY } from './access-test-fixtures';

// The Access section inside the domain and HTTP service forms: what it sends, in which order, and how refusals land
// on its fields.

const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
const radio = (name: string) => screen.getByRole<HTMLInputElement>('radio', { name });
const domain: Domain = {
  id: 7,
  domain: 'app.example.com',
  ssl: 'self-signed',
  ownerNodeId: null,
  ownerNodeName: null,
  certificate: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
};
const providers = { status: 200, body: { data: [buildProvider()], page: 1, limit: 100, total: 1 } };
const writes = (calls: { method: string; path: string }[]) =>
  calls.filter((call) => call.method !== 'GET').map((call) => `${call.method} ${call.path}`);

afterEach(() => {
  vi.unstubAllGlobals();
  for (const toast of getToasts()) dismissToast(toast.id);
});

describe('Access section of the domain form', () => {
  it('says a protected policy needs a way in, and sends nothing', async () => {
    const calls = fakeApi((method, path) => (path === '/api/access/providers' ? providers : undefined));
    renderWithProviders(<DomainFormDialog open onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'shop.example.com' } });
    fireEvent.click(radio('Protected'));
    await save();
    expect(screen.getByText(accessMessages.noWayIn)).toBeTruthy();
    expect(writes(calls)).toEqual([]);
    // The first field in error takes focus, as for the form's own fields.
    expect(document.activeElement).toBe(radio('Public'));
  });

  it('saves the domain, then its policy (the password write-only)', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/access/providers') return providers;
      if (path === '/api/domains/7/access')
        return {
          status: 200,
          body: { domainId: 7, domain: 'app.example.com', policy: buildPolicy({ passwordSet: true }) },
        };
      if (method === 'PATCH' && path === '/api/domains/7') return { status: 200, body: domain };
      return undefined;
    });
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog domain={domain} open onClose={onClose} />);
    expect(await screen.findByText('A password is set.')).toBeTruthy();
    expect(radio('Protected').checked).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    const password = screen.getByLabelText<HTMLInputElement>('New password or PIN');
    expect(document.activeElement).toBe(password);
    expect(password.value).toBe('');
    fireEvent.change(password, { target: { value: '424242' } });
    fireEvent.click(screen.getByLabelText('Share links'));
    await save();

    expect(writes(calls)).toEqual(['PATCH /api/domains/7', 'PATCH /api/domains/7/access']);
    expect(calls.find((call) => call.path === '/api/domains/7/access' && call.method === 'PATCH')?.body).toMatchObject({
      mode: 'protected',
      providerId: 3,
      allowEmails: ['alice@example.com'],
      password: '424242',
      shareLinks: true,
    });
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('removes a password with null, and keeps it by leaving it out', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/domains/7/access')
        return {
          status: 200,
          body: { domainId: 7, domain: 'app.example.com', policy: buildPolicy({ passwordSet: true }) },
        };
      if (method === 'PATCH' && path === '/api/domains/7') return { status: 200, body: domain };
      return path === '/api/access/providers' ? providers : undefined;
    });
    renderWithProviders(<DomainFormDialog domain={domain} open onClose={vi.fn()} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Remove password' }));
    expect(screen.getByText('Removed when you save.')).toBeTruthy();
    await save();
    const body = calls.find((call) => call.path === '/api/domains/7/access' && call.method === 'PATCH')?.body;
    expect(body).toHaveProperty('password', null);
  });

  it("shows the server's 422 on its field and stays open; a new domain is deleted again", async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/access/providers') return providers;
      if (method === 'POST' && path === '/api/domains') return { status: 201, body: domain };
      if (method === 'PATCH' && path === '/api/domains/7/access')
        return {
          status: 422,
          body: {
            message: 'Validation failed',
            errors: { body: [{ field: 'providerId', message: accessMessages.providerNotFound }] },
          },
        };
      if (method === 'DELETE') return { status: 204 };
      return undefined;
    });
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog open onClose={onClose} />);
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'app.example.com' } });
    fireEvent.click(radio('Protected'));
    await screen.findByRole('option', { name: 'Keycloak' });
    fireEvent.change(screen.getByLabelText('Single sign-on'), { target: { value: '3' } });
    fireEvent.change(screen.getByLabelText('Allowed email domains'), { target: { value: 'example.com' } });
    await save();

    expect(await screen.findByText(accessMessages.providerNotFound)).toBeTruthy();
    expect(writes(calls)).toEqual(['POST /api/domains', 'PATCH /api/domains/7/access', 'DELETE /api/domains/7']);
    expect(onClose).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(screen.getByLabelText('Single sign-on'));
  });
});

describe('Access section of the HTTP service form', () => {
  it('creates a service that inherits with one POST, as before', async () => {
    const calls = fakeApi((method) => (method === 'POST' ? { status: 201, body: buildHttpService() } : undefined));
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    expect(radio("Inherit the domain's policy").checked).toBe(true);
    fireEvent.change(screen.getByLabelText('Service Name'), { target: { value: 'api' } });
    await save();
    expect(writes(calls)).toEqual(['POST /api/services/4/http']);
    expect(calls[calls.length - 1]?.body).not.toHaveProperty('enabled');
  });

  it('creates a protected service disabled, sets its policy, then enables it', async () => {
    const service = buildHttpService();
    const calls = fakeApi((method, path) => {
      if (method === 'POST') return { status: 201, body: { ...service, enabled: false } };
      if (method === 'PATCH' && path.endsWith('/access'))
        return { status: 200, body: buildServiceAccess({ mode: 'protected', own: buildPolicy(), setBy: 'admin' }) };
      if (method === 'PATCH' && path.endsWith('/enable')) return { status: 200, body: service };
      return path === '/api/access/providers' ? providers : undefined;
    });
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Service Name'), { target: { value: 'api' } });
    fireEvent.change(screen.getByLabelText('Public Domain'), { target: { value: 'app.example.com' } });
    fireEvent.click(radio('Protected'));
    fireEvent.click(screen.getByLabelText('Share links'));
    fireEvent.change(screen.getByLabelText('Paths without sign-in'), { target: { value: '/hook\n/.well-known' } });
    await save();

    expect(await screen.findByText('Your Service is Now Publicly Available')).toBeTruthy();
    expect(writes(calls)).toEqual([
      'POST /api/services/4/http',
      'PATCH /api/services/4/http/9/access',
      'PATCH /api/services/4/http/9/enable',
    ]);
    expect(calls.find((call) => call.method === 'POST')?.body).toMatchObject({ enabled: false });
    expect(calls.find((call) => call.path.endsWith('/access') && call.method === 'PATCH')?.body).toMatchObject({
      mode: 'protected',
      providerId: null,
      shareLinks: true,
      bypassPaths: ['/hook', '/.well-known'],
    });
  });

  it('deletes the new service again when its policy is refused, and keeps the form', async () => {
    const calls = fakeApi((method, path) => {
      if (method === 'POST') return { status: 201, body: buildHttpService({ enabled: false }) };
      if (method === 'PATCH' && path.endsWith('/access'))
        return {
          status: 422,
          body: { message: 'Validation failed', errors: { body: [{ field: 'bypassNetworks', message: 'nope' }] } },
        };
      if (method === 'DELETE') return { status: 204 };
      return path === '/api/access/providers' ? providers : undefined;
    });
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Service Name'), { target: { value: 'api' } });
    fireEvent.change(screen.getByLabelText('Public Domain'), { target: { value: 'app.example.com' } });
    fireEvent.click(radio('Protected'));
    fireEvent.click(screen.getByLabelText('Share links'));
    await save();

    expect(await screen.findByText('nope')).toBeTruthy();
    expect(writes(calls)).toEqual([
      'POST /api/services/4/http',
      'PATCH /api/services/4/http/9/access',
      'DELETE /api/services/4/http/9',
    ]);
    expect(screen.queryByText('Your Service is Now Publicly Available')).toBeNull();
    expect(screen.getByRole('button', { name: 'Save' })).toBeTruthy();
  });

  it('refuses a protected policy on a service without a domain before sending', async () => {
    const calls = fakeApi((method, path) => (path === '/api/access/providers' ? providers : undefined));
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Service Name'), { target: { value: 'api' } });
    fireEvent.click(radio('Protected'));
    expect(screen.getByText(accessMessages.needsDomain)).toBeTruthy();
    await save();
    expect(writes(calls)).toEqual([]);
  });

  it("shows what applies now and where it comes from, and the domain's policy under inherit", async () => {
    const access = buildServiceAccess({
      domainPolicy: buildPolicy({ passwordSet: true }),
      effective: { ...buildPolicy({ passwordSet: true }), source: 'domain' },
    });
    fakeApi((method, path) => (path === '/api/services/4/http/9/access' ? { status: 200, body: access } : undefined));
    renderWithProviders(
      <HttpServiceFormDialog node={buildNode()} service={buildHttpService()} open onClose={vi.fn()} />,
    );
    const applied = await screen.findByRole('group', { name: 'Applied now' });
    expect(within(applied).getByText('Applied now: Inherited from app.example.com')).toBeTruthy();
    expect(within(applied).getByText('Password or PIN')).toBeTruthy();
    await waitFor(() =>
      expect(
        screen.getByText(/^The domain's policy: Single sign-on with Keycloak \(1 email\); Password or PIN/),
      ).toBeTruthy(),
    );
  });

  it('edits: PATCHes the service, then the policy only when it changed', async () => {
    const access = buildServiceAccess({ domainPolicy: PUBLIC_POLICY });
    const calls = fakeApi((method, path) => {
      if (path === '/api/services/4/http/9/access') return { status: 200, body: access };
      if (method === 'PATCH') return { status: 200, body: buildHttpService() };
      return undefined;
    });
    renderWithProviders(
      <HttpServiceFormDialog node={buildNode()} service={buildHttpService()} open onClose={vi.fn()} />,
    );
    await screen.findByRole('group', { name: 'Applied now' });
    await save();
    expect(writes(calls)).toEqual(['PATCH /api/services/4/http/9']);
  });
});
