import type { CertificateOverview } from '@postern/contract';
import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { CertificatesPage } from './certificates-page';

const DAY_MS = 86_400_000;
const certificate = (fields: Partial<NonNullable<CertificateOverview['certificate']>>) => ({
  state: 'valid' as const,
  issuer: 'CN=R11',
  notBefore: new Date(Date.now() - DAY_MS).toISOString(),
  notAfter: new Date(Date.now() + 60 * DAY_MS).toISOString(),
  fingerprint: 'AA:BB',
  error: null,
  ...fields,
});

const rows: CertificateOverview[] = [
  {
    domainId: 1,
    domain: '*.lab.example.com',
    ssl: 'certbot',
    method: 'dns-01',
    names: ['*.lab.example.com'],
    caName: 'ZeroSSL',
    dnsProviderName: 'bind-lab',
    certificate: certificate({
      error: 'bind-lab: the TSIG key is wrong',
      lastAttemptAt: new Date(Date.now() - 2 * 3600_000).toISOString(),
    }),
  },
  {
    domainId: 2,
    domain: 'own.example.com',
    ssl: 'uploaded',
    method: 'uploaded',
    names: ['own.example.com', 'www.own.example.com'],
    caName: null,
    dnsProviderName: null,
    certificate: certificate({ issuer: 'CN=Corp CA', notAfter: new Date(Date.now() + 5 * DAY_MS).toISOString() }),
  },
];

describe('the certificates page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("shows each certificate's method, names, issuer, last attempt and its error; warns about an uploaded one", async () => {
    fakeApi((method, path) => (path === '/api/certificates' ? { status: 200, body: rows } : undefined));
    renderInRouter(() => <CertificatesPage />);
    const wildcard = (await screen.findByText('*.lab.example.com')).closest('tr') as HTMLElement;
    expect(within(wildcard).getByText('bind-lab · ZeroSSL')).toBeTruthy();
    // A renewal that failed while the certificate in use is still valid: both are said.
    expect(within(wildcard).getByText('Valid')).toBeTruthy();
    expect(within(wildcard).getByText('bind-lab: the TSIG key is wrong')).toBeTruthy();
    expect(within(wildcard).getByText('2 hours ago')).toBeTruthy();

    const own = screen.getByText('own.example.com').closest('tr') as HTMLElement;
    expect(within(own).getByText('Also www.own.example.com')).toBeTruthy();
    expect(within(own).getByText('CN=Corp CA')).toBeTruthy();
    expect(within(own).getByText(/^Expires in 5 days .+: upload a new certificate$/)).toBeTruthy();
    expect(within(own).getByText('Never')).toBeTruthy();
    expect(within(own).queryByRole('button', { name: /Renew now/ })).toBeNull();
  });

  it('renews a CA certificate now with POST /api/certificates/:id/renew', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/certificates') return { status: 200, body: rows };
      if (method === 'POST')
        return { status: 200, body: { ...rows[0], certificate: certificate({ state: 'pending' }) } };
      return undefined;
    });
    renderInRouter(() => <CertificatesPage />);
    const button = await screen.findByRole('button', { name: 'Renew now the certificate of *.lab.example.com' });
    await act(async () => fireEvent.click(button));
    expect(calls.find((call) => call.method === 'POST')).toMatchObject({ path: '/api/certificates/1/renew' });
    expect(await screen.findByText('Renewal of *.lab.example.com started: the CA is asked now')).toBeTruthy();
  });
});
