import type { Domain } from '@postern/contract';
import { act, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { DomainFormDialog } from './domain-form-dialog';

const domain: Domain = {
  id: 3,
  domain: 'app.example.com',
  ssl: 'certbot',
  certificate: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
};

const sslSelect = () => screen.getByLabelText<HTMLSelectElement>('SSL Certificate Type');
const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));

describe('domain form', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('forces self-signed and disables the selector while validation is skipped', () => {
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
    expect(calls).toHaveLength(0);
  });

  it('creates with POST, sending the skip-validation choice', async () => {
    const calls = fakeApi((method) => (method === 'POST' ? { status: 201, body: { ...domain, ssl: 'self-signed' } } : undefined));
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog open onClose={onClose} />);
    fireEvent.change(screen.getByLabelText('Domain'), { target: { value: 'app.example.com' } });
    fireEvent.click(screen.getByLabelText('Skip Domain Validation'));
    await save();
    expect(calls[0]).toMatchObject({
      method: 'POST',
      path: '/api/domains',
      body: { domain: 'app.example.com', ssl: 'self-signed', skipValidation: true },
    });
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('edits with PATCH and maps a 422 onto the domain field', async () => {
    const calls = fakeApi((method) =>
      method === 'PATCH'
        ? { status: 422, body: { message: 'Validation failed', errors: { body: [{ field: 'domain', message: 'This domain already exists' }] } } }
        : undefined,
    );
    const onClose = vi.fn();
    renderWithProviders(<DomainFormDialog domain={domain} open onClose={onClose} />);
    expect(screen.getByLabelText<HTMLInputElement>('Domain').value).toBe('app.example.com');
    await save();
    expect(calls[0]).toMatchObject({ method: 'PATCH', path: '/api/domains/3' });
    expect(await screen.findByText('This domain already exists')).toBeTruthy();
    expect(onClose).not.toHaveBeenCalled();
  });
});
