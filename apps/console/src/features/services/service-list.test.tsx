import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpServicesCard } from './service-cards';
import { ServiceList } from './service-list';
import { buildHttpService, fakeApi, renderInRouter } from './service-test-fixtures';
import { buildNode } from '../../test/fixtures';

const page = (data: unknown[]) => ({ status: 200, body: { data, page: 1, limit: 5, total: data.length } });

const openMenu = async (name: string) => {
  fireEvent.click(await screen.findByRole('button', { name: `Actions for ${name}` }));
  return screen.getByRole('menu');
};

describe('service list', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows each service with a green dot only when it is publicly served', async () => {
    fakeApi((method, path) =>
      method === 'GET' && path === '/api/services/4/http'
        ? page([
            buildHttpService({ id: 1, name: 'served' }),
            buildHttpService({ id: 2, name: 'switched-off', enabled: false }),
            buildHttpService({ id: 3, name: 'rejected', applyError: 'nginx -t failed' }),
          ])
        : undefined,
    );
    renderInRouter(() => <ServiceList type="http" scope={{ kind: 'node', nodeId: 4 }} empty={null} />);
    // The row carries the dot twice (under the name on phones, in the Status column elsewhere): both agree.
    const dotOf = async (name: string) => {
      const dots = within((await screen.findByText(name)).closest('tr') as HTMLElement).getAllByRole('img');
      expect(new Set(dots.map((dot) => dot.getAttribute('aria-label'))).size).toBe(1);
      return dots[0] as HTMLElement;
    };
    expect((await dotOf('served')).getAttribute('aria-label')).toBe('Public');
    expect((await dotOf('switched-off')).getAttribute('aria-label')).toBe('Not public');
    expect((await dotOf('rejected')).getAttribute('aria-label')).toBe('Not public');
    expect(screen.getByText('nginx -t failed')).toBeTruthy();
  });

  it('offers Edit Service inside a node and opens the logs of a service', async () => {
    fakeApi((method, path) => (path === '/api/services/4/http' ? page([buildHttpService()]) : undefined));
    const router = renderInRouter(() => (
      <ServiceList type="http" scope={{ kind: 'node', nodeId: 4 }} empty={null} onEdit={vi.fn()} />
    ));
    const menu = await openMenu('api');
    expect(
      within(menu)
        .getAllByRole('menuitem')
        .map((item) => item.textContent),
      // The spec's items in the spec's order; 'Visitor Access' (docs/ACCESS.md) is HTTP services' own, beyond it.
    ).toEqual(['Info', 'Logs Monitor', 'Visitor Access', 'Edit Service', 'Disable Access', 'Delete Service']);
    fireEvent.click(within(menu).getByRole('menuitem', { name: 'Logs Monitor' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/nodes/4/http/9/logs'));
  });

  it("lists a domain's services from every node and leads to their node", async () => {
    const calls = fakeApi((method, path) =>
      path === '/api/services/http' ? page([buildHttpService({ enabled: false })]) : undefined,
    );
    const router = renderInRouter(() => (
      <ServiceList type="http" scope={{ kind: 'domain', domain: 'app.example.com' }} empty={null} />
    ));
    const menu = await openMenu('api');
    expect(calls[0]?.query.get('domain')).toBe('app.example.com');
    expect(within(menu).queryByRole('menuitem', { name: 'Edit Service' })).toBeNull();
    expect(within(menu).getByRole('menuitem', { name: 'Enable Access' })).toBeTruthy();
    fireEvent.click(within(menu).getByRole('menuitem', { name: 'Go to node' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/nodes/4'));
  });

  it('disables access only after the confirmation, then says so', async () => {
    const calls = fakeApi((method, path) => {
      if (path === '/api/services/4/http') return page([buildHttpService()]);
      if (method === 'PATCH') return { status: 200, body: buildHttpService({ enabled: false }) };
      return undefined;
    });
    renderInRouter(() => <ServiceList type="http" scope={{ kind: 'node', nodeId: 4 }} empty={null} />);
    fireEvent.click(within(await openMenu('api')).getByRole('menuitem', { name: 'Disable Access' }));
    const dialog = await screen.findByRole('dialog', { name: 'Disable Public Access' });
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Yes, disable public access!' })));
    expect(calls.find((call) => call.method === 'PATCH')?.path).toBe('/api/services/4/http/9/disable');
    expect(await screen.findByText('Service disabled from public access successfully!')).toBeTruthy();
  });

  it('deletes nothing when the confirmation is cancelled', async () => {
    const calls = fakeApi((method, path) => (path === '/api/services/4/http' ? page([buildHttpService()]) : undefined));
    renderInRouter(() => <ServiceList type="http" scope={{ kind: 'node', nodeId: 4 }} empty={null} />);
    fireEvent.click(within(await openMenu('api')).getByRole('menuitem', { name: 'Delete Service' }));
    const dialog = await screen.findByRole('dialog', { name: 'Delete Service' });
    expect(within(dialog).getByText(/cannot be undone/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(calls.some((call) => call.method === 'DELETE')).toBe(false);
  });
});

describe('HTTP services card', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("shows the empty state and opens the form from 'Add Service'", async () => {
    fakeApi();
    renderInRouter(() => <HttpServicesCard node={buildNode()} />);
    expect(await screen.findByText('No HTTP services yet')).toBeTruthy();
    const [, emptyStateAction] = screen.getAllByRole('button', { name: /Add Service/ });
    fireEvent.click(emptyStateAction as HTMLElement);
    expect(await screen.findByRole('dialog', { name: 'Expose HTTP Service' })).toBeTruthy();
  });

  it("opens a row's edit form with its stored values", async () => {
    fakeApi((method, path) =>
      path === '/api/services/4/http' ? page([buildHttpService({ name: 'grafana', backendPort: 3000 })]) : undefined,
    );
    renderInRouter(() => <HttpServicesCard node={buildNode()} />);
    fireEvent.click(within(await openMenu('grafana')).getByRole('menuitem', { name: 'Edit Service' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit HTTP Service' });
    expect(within(dialog).getByLabelText<HTMLInputElement>('Service Name').value).toBe('grafana');
    expect(within(dialog).getByLabelText<HTMLInputElement>('Backend Port').value).toBe('3000');
  });
});
