import { certificateMessages, type Domain } from '@postern/contract';
import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { buildNode } from '../../test/fixtures';
import { DomainFormDialog } from './domain-form-dialog';

const nodeFields = { address: '10.44.0.9', status: 'offline' } as const;

const domain: Domain = {
  id: 3,
  domain: 'app.example.com',
  ssl: 'certbot',
  ownerNodeId: null,
  ownerNodeName: null,
  certificate: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
};

const nodes = {
  status: 200,
  body: {
    data: [
      buildNode({ ...nodeFields, id: 1, name: 'Gateway (local)', isLocal: true }),
      buildNode({ ...nodeFields, id: 7, name: 'office' }),
      buildNode({
        ...nodeFields,
        id: 8,
        name: 'lab',
        isGateway: true,
        gatewayNetwork: '192.168.8.0/24',
        gatewayNetworks: ['192.168.8.0/24'],
      }),
    ],
    page: 1,
    limit: 100,
    total: 3,
  },
};
const ownerSelect = () => screen.getByLabelText<HTMLSelectElement>('Owner');
const optionLabels = () => [...ownerSelect().options].map((option) => option.textContent);
const sslSelect = () => screen.getByLabelText<HTMLSelectElement>('SSL Certificate Type');
const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));

describe('domain form', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('forces self-signed and disables the selector while validation is skipped', () => {
    fakeApi();
    renderWithProviders(<DomainFormDialog open onClose={vi.fn()} />);
    expect(sslSelect().value).toBe('certbot');
    expect(sslSelect().disabled).toBe(false);

    fireEvent.click(screen.getByLabelText('Skip Domain Validation'));
    expect(sslSelect().value).toBe('self-signed');
    expect(sslSelect().disabled).toBe(true);

    fireEvent.click(screen.getByLabelText('Skip Domain Validation'));
    expect(sslSelect().disabled).toBe(false);
  });

  it('requires a valid domain name, on input and on submit', async () => {
    const calls = fakeApi();
    renderWithProviders(<DomainFormDialog open onClose={vi.fn()} />);
    await save();
    expect(screen.getByText('This field is not allowed to be empty')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'not a domain' } });
    expect(screen.getByText('This field must contain a valid domain name')).toBeTruthy();
    expect(calls.filter((call) => call.method !== 'GET')).toHaveLength(0);
  });

  it('creates with POST, sending the skip-validation choice', async () => {
    const calls = fakeApi((method) =>
      method === 'POST' ? { status: 201, body: { ...domain, ssl: 'self-signed' } } : undefined,
    );
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog open onClose={onClose} />);
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'app.example.com' } });
    fireEvent.click(screen.getByLabelText('Skip Domain Validation'));
    await save();
    expect(calls.find((call) => call.method === 'POST')).toMatchObject({
      method: 'POST',
      path: '/api/domains',
      body: { domain: 'app.example.com', ssl: 'self-signed', skipValidation: true, ownerNodeId: null },
    });
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('edits with PATCH and maps a 422 onto the domain field', async () => {
    const calls = fakeApi((method) =>
      method === 'PATCH'
        ? {
            status: 422,
            body: {
              message: 'Validation failed',
              errors: { body: [{ field: 'domain', message: 'This domain already exists' }] },
            },
          }
        : undefined,
    );
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog domain={domain} open onClose={onClose} />);
    expect(screen.getByLabelText<HTMLInputElement>('Domain').value).toBe('app.example.com');
    await save();
    expect(calls.find((call) => call.method === 'PATCH')).toMatchObject({ method: 'PATCH', path: '/api/domains/3' });
    expect(await screen.findByText('This domain already exists')).toBeTruthy();
    expect(onClose).not.toHaveBeenCalled();
  });

  it('offers Admin and every node but the local one as owner, and sends the choice', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/nodes') return nodes;
      if (method === 'POST') return { status: 201, body: { ...domain, ownerNodeId: 8, ownerNodeName: 'lab' } };
      return undefined;
    });
    renderWithProviders(<DomainFormDialog open onClose={vi.fn()} />);
    await waitFor(() => expect(optionLabels()).toEqual(['Admin', 'office', 'lab']));
    expect(ownerSelect().value).toBe('');
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'lab.example.com' } });
    fireEvent.change(ownerSelect(), { target: { value: '8' } });
    await save();
    expect(calls.find((call) => call.method === 'POST')?.body).toMatchObject({
      domain: 'lab.example.com',
      ownerNodeId: 8,
    });
  });

  it('shows the current owner when editing, also one not among the loaded nodes, and hands it back to Admin', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/nodes') return nodes;
      if (method === 'PATCH') return { status: 200, body: domain };
      return undefined;
    });
    renderWithProviders(
      <DomainFormDialog domain={{ ...domain, ownerNodeId: 120, ownerNodeName: 'far-away' }} open onClose={vi.fn()} />,
    );
    await waitFor(() => expect(optionLabels()).toEqual(['Admin', 'office', 'lab', 'far-away']));
    expect(ownerSelect().value).toBe('120');
    fireEvent.change(ownerSelect(), { target: { value: '' } });
    await save();
    expect(calls.find((call) => call.method === 'PATCH')?.body).toMatchObject({ ownerNodeId: null });
  });

  it('refuses a wildcard on HTTP-01 on the Challenge field; with DNS-01, a provider and a CA it is sent', async () => {
    const stamps = { domains: 0, created_at: domain.created_at, updated_at: domain.updated_at };
    const unset = { server: null, port: null, keyName: null, algorithm: null, zone: null, zoneId: null };
    const provider = {
      ...stamps,
      ...unset,
      id: 4,
      name: 'bind-lab',
      kind: 'rfc2136',
      ...{ accessKeyId: null, hostedZoneId: null, region: null, serverUrl: null, username: null, subdomain: null },
      hasSecret: true,
      propagationTimeoutSeconds: 120,
    };
    const ca = {
      ...stamps,
      id: 2,
      name: 'ZeroSSL',
      directoryUrl: 'https://acme.zerossl.com/v2/DV90',
      email: null,
      eabKeyId: 'kid',
      hasEabHmacKey: true,
      isDefault: false,
    };
    const providers = { status: 200, body: [provider] };
    const authorities = { status: 200, body: [ca] };
    const calls = fakeApi((method, path) => {
      if (path === '/api/certificates/dns-providers') return providers;
      if (path === '/api/certificates/authorities') return authorities;
      if (method === 'POST') return { status: 201, body: { ...domain, domain: '*.lab.example.com' } };
      return undefined;
    });
    renderWithProviders(<DomainFormDialog open onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: '*.lab.example.com' } });
    await save();
    expect(await screen.findByText(certificateMessages.wildcardNeedsDns)).toBeTruthy();
    expect(calls.filter((call) => call.method === 'POST')).toHaveLength(0);

    fireEvent.change(screen.getByLabelText('Challenge'), { target: { value: 'dns-01' } });
    await waitFor(() => expect(screen.getByRole('option', { name: 'bind-lab' })).toBeTruthy());
    fireEvent.change(screen.getByLabelText('DNS Provider'), { target: { value: '4' } });
    await waitFor(() => expect(screen.getByRole('option', { name: 'ZeroSSL' })).toBeTruthy());
    fireEvent.change(screen.getByLabelText('Certificate Authority'), { target: { value: '2' } });
    await save();
    expect(calls.find((call) => call.method === 'POST')?.body).toMatchObject({
      domain: '*.lab.example.com',
      ssl: 'certbot',
      challenge: 'dns-01',
      dnsProviderId: 4,
      acmeCaId: 2,
    });
  });
});
