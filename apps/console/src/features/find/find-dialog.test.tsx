import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildHttpService, fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { buildNode } from '../../test/fixtures';
import { FindDialog } from './find-dialog';

const list = (data: unknown[]) => ({ status: 200, body: { data, page: 1, limit: 8, total: data.length } });
const domain = {
  id: 3,
  domain: 'pi.example.com',
  ssl: 'certbot',
  ownerNodeId: null,
  ownerNodeName: null,
  certificate: null,
  created_at: '2026-11-22T10:00:00Z',
  updated_at: '2026-11-22T10:00:00Z',
};

function answer(services: unknown[], nodes: unknown[], domains: unknown[]) {
  return fakeApi((method, path) => {
    if (path === '/api/services/find') return list(services);
    if (path === '/api/nodes') return list(nodes);
    if (path === '/api/domains') return list(domains);
    return undefined;
  });
}

describe('Find (Ctrl+K)', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('finds services, nodes and domains, each in its group', async () => {
    const calls = answer(
      [{ type: 'http', nodeName: 'pi-1', service: buildHttpService({ name: 'pi-hole', nodeId: 4 }) }],
      [buildNode({ id: 4, name: 'pi-1' })],
      [domain],
    );
    renderInRouter(() => <FindDialog onClose={vi.fn()} />);
    fireEvent.change(await screen.findByLabelText('Name or address'), { target: { value: 'pi' } });
    const services = await screen.findByRole('region', { name: 'Services' });
    expect(within(services).getByRole('link').getAttribute('href')).toBe('/nodes/4?httpQ=pi-hole&service=http%3A9');
    expect(
      within(screen.getByRole('region', { name: 'Nodes' }))
        .getByRole('link')
        .getAttribute('href'),
    ).toBe('/nodes/4');
    expect(
      within(screen.getByRole('region', { name: 'Domains' }))
        .getByRole('link')
        .getAttribute('href'),
    ).toBe('/domains?q=pi.example.com&open=3');
    expect(screen.getByRole('status').textContent).toBe(
      '1 service, 1 node and 1 domain match “pi”. Enter opens the first.',
    );
    expect(calls.find((call) => call.path === '/api/nodes')?.query.get('q')).toBe('pi');
    expect(calls.find((call) => call.path === '/api/domains')?.query.get('search')).toBe('pi');
  });

  it('opens the first match on Enter, and closes', async () => {
    answer([], [buildNode({ id: 4, name: 'pi-1' })], []);
    const onClose = vi.fn();
    const router = renderInRouter(() => <FindDialog onClose={onClose} />);
    const input = await screen.findByLabelText('Name or address');
    fireEvent.change(input, { target: { value: 'pi-1' } });
    await screen.findByRole('region', { name: 'Nodes' });
    fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(router.state.location.pathname).toBe('/nodes/4'));
    expect(onClose).toHaveBeenCalled();
  });

  it('does nothing on Enter while the search has not caught up with the typing', async () => {
    answer([], [buildNode({ id: 4, name: 'pi-1' })], []);
    const router = renderInRouter(() => <FindDialog onClose={vi.fn()} />);
    const input = await screen.findByLabelText('Name or address');
    fireEvent.change(input, { target: { value: 'pi-1' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    await screen.findByRole('region', { name: 'Nodes' });
    expect(router.state.location.pathname).toBe('/');
  });
});
