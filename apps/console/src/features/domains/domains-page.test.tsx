import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildHttpService, fakeApi, pageAnswer as list, renderInRouter } from '../services/service-test-fixtures';
import { buildDomain } from '../../test/fixtures';
import { DomainsPage } from './domains-page';

const domain = buildDomain();

describe('domains page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("shows 'No domains yet' with an 'Add Domain' action", async () => {
    fakeApi();
    renderInRouter(() => <DomainsPage />);
    expect(await screen.findByText('No domains yet')).toBeTruthy();
    expect(screen.getAllByRole('button', { name: /Add Domain/ })).toHaveLength(2);
  });

  it.each([
    ['viewer', false],
    ['operator', true],
  ] as const)('offers a %s changes only if its role may make them', async (role, mayChange) => {
    fakeApi((method, path) => {
      if (path === '/api/domains') return list([domain]);
      if (path === '/api/auth/account')
        return { status: 200, body: { id: 5, username: 'someone', role, via: 'password' } };
      return undefined;
    });
    renderInRouter(() => <DomainsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for app.example.com' }));
    expect(await screen.findByRole('menuitem', { name: 'Logs Monitor' })).toBeTruthy();
    for (const name of ['Edit Domain', 'Upload Certificate', 'Delete Domain'])
      expect(screen.queryByRole('menuitem', { name }) !== null, name).toBe(mayChange);
    expect(screen.queryByRole('button', { name: /Add Domain/ }) !== null).toBe(mayChange);
  });

  it('lists domains with their certificate and creation date', async () => {
    fakeApi((method, path) => (path === '/api/domains' ? list([domain]) : undefined));
    renderInRouter(() => <DomainsPage />);
    const row = (await screen.findByText('app.example.com')).closest('tr') as HTMLElement;
    expect(within(row).getByText("Let's Encrypt")).toBeTruthy();
    expect(within(row).getByText('Valid')).toBeTruthy();
    expect(within(row).getByText('Valid until 01/30/2027')).toBeTruthy();
    expect(within(row).getByText('11/22/2026')).toBeTruthy();
  });

  it("shows each domain's owner: Admin, or the node linked to its page", async () => {
    const owned = { ...domain, id: 4, domain: 'office.example.com', ownerNodeId: 7, ownerNodeName: 'office' };
    fakeApi((method, path) => (path === '/api/domains' ? list([domain, owned]) : undefined));
    renderInRouter(() => <DomainsPage />);
    expect(await screen.findByRole('columnheader', { name: 'Owner' })).toBeTruthy();
    const adminRow = (await screen.findByText('app.example.com')).closest('tr') as HTMLElement;
    expect(within(adminRow).getByText('Admin')).toBeTruthy();
    const nodeRow = screen.getByText('office.example.com').closest('tr') as HTMLElement;
    expect(within(nodeRow).getByRole('link', { name: 'office' }).getAttribute('href')).toBe('/nodes/7');
  });

  it("expands a row to the domain's services, or to where to expose the first one", async () => {
    fakeApi((method, path, query) => {
      if (path === '/api/domains') return list([domain, { ...domain, id: 4, domain: 'empty.example.com' }]);
      if (path === '/api/services/http' && query.get('domain') === 'app.example.com')
        return list([buildHttpService({ name: 'web' })]);
      return undefined;
    });
    renderInRouter(() => <DomainsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Show services of app.example.com' }));
    expect(await screen.findByText('web')).toBeTruthy();
    expect(screen.getByText('No TCP services yet')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Show services of empty.example.com' }));
    expect(await screen.findByText(/Expose the first service from/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Client / Nodes' }).getAttribute('href')).toBe('/nodes');
  });

  it('deletes a domain after the confirmation', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/domains') return list([domain]);
      if (method === 'DELETE') return { status: 204 };
      return undefined;
    });
    renderInRouter(() => <DomainsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for app.example.com' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Delete Domain' }));
    const dialog = await screen.findByRole('dialog', { name: 'Delete Domain' });
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Yes, delete it!' })));
    expect(calls.find((call) => call.method === 'DELETE')?.path).toBe('/api/domains/3');
    expect(await screen.findByText('Domain deleted successfully!')).toBeTruthy();
  });
});
