import type { Domain } from '@postern/contract';
import { act, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderWithProviders } from '../services/service-test-fixtures';
import { DomainFormDialog } from './domain-form-dialog';
import { UploadCertificateDialog } from './upload-certificate-dialog';

const domain: Domain = {
  id: 3,
  domain: 'app.example.com',
  ssl: 'self-signed',
  ownerNodeId: null,
  ownerNodeName: null,
  certificate: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
};
const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n';
const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
const fill = () => {
  fireEvent.change(screen.getByLabelText('Certificate Chain (PEM)'), { target: { value: CERT } });
  fireEvent.change(screen.getByLabelText('Private Key (PEM)'), { target: { value: KEY } });
};

describe('upload certificate form', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks for PEM text before sending anything', async () => {
    const calls = fakeApi();
    renderWithProviders(<UploadCertificateDialog domain={domain} onClose={vi.fn()} />);
    fireEvent.change(screen.getByLabelText('Certificate Chain (PEM)'), { target: { value: 'hello' } });
    await save();
    expect(screen.getByText(/This field must hold one or more PEM certificates/)).toBeTruthy();
    expect(calls.filter((call) => call.method !== 'GET')).toHaveLength(0);
  });

  it("sends the chain and key, and shows the server's refusal on its field", async () => {
    const refusal = 'The certificate is for other.example.com, not for app.example.com';
    const calls = fakeApi((method) =>
      method === 'POST'
        ? {
            status: 422,
            body: { message: 'Validation failed', errors: { body: [{ field: 'certificate', message: refusal }] } },
          }
        : undefined,
    );
    const onClose = vi.fn();
    renderWithProviders(<UploadCertificateDialog domain={domain} onClose={onClose} />);
    fill();
    await save();
    expect(calls.find((call) => call.method === 'POST')).toMatchObject({
      path: '/api/domains/3/certificate',
      body: { certificate: CERT, privateKey: KEY },
    });
    expect(screen.getByText(refusal)).toBeTruthy();
    expect(onClose).not.toHaveBeenCalled();
  });

  it('keeps an uploaded domain uploaded when it is edited', async () => {
    const calls = fakeApi((method) =>
      method === 'PATCH' ? { status: 200, body: { ...domain, ssl: 'uploaded' } } : undefined,
    );
    renderWithProviders(<DomainFormDialog domain={{ ...domain, ssl: 'uploaded' }} open onClose={vi.fn()} />);
    expect(screen.getByLabelText<HTMLSelectElement>('SSL Certificate Type').value).toBe('uploaded');
    await save();
    expect(calls.find((call) => call.method === 'PATCH')).toMatchObject({ body: { ssl: 'uploaded' } });
  });
});
