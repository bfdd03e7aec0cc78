import type { Attention } from '@postern/contract';
import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { HomeOverview } from './home-overview';

const empty = { total: 0, items: [] };
const nothing: Attention = {
  totals: { nodes: 0, domains: 0, httpServices: 0, tcpServices: 0 },
  offlineNodes: empty,
  disconnectedNodeIds: [],
  backendsDown: empty,
  certificates: empty,
  setAside: empty,
  drift: null,
};

const serve = (attention: Attention) =>
  fakeApi((method, path) => (path === '/api/system/attention' ? { status: 200, body: attention } : undefined));

describe('home page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows the welcome cards while the gateway holds nothing', async () => {
    serve(nothing);
    renderInRouter(() => <HomeOverview />);
    expect(await screen.findByRole('heading', { name: 'Create your first node' })).toBeTruthy();
    expect(screen.queryByRole('region', { name: /^Needs attention/ })).toBeNull();
  });

  it('leads with what needs attention once in use, each item linking to where it is fixed', async () => {
    serve({
      ...nothing,
      totals: { nodes: 2, domains: 1, httpServices: 3, tcpServices: 1 },
      offlineNodes: { total: 1, items: [{ id: 7, name: 'pi-1', latestHandshakeTimestamp: null }] },
      backendsDown: {
        total: 1,
        items: [{ type: 'http', id: 9, nodeId: 7, name: 'web', nodeName: 'pi-1', since: null, lastError: 'refused' }],
      },
      certificates: {
        total: 1,
        items: [{ id: 3, domain: 'shop.example.com', problem: 'failed', notAfter: null, error: 'NXDOMAIN' }],
      },
      setAside: {
        total: 7,
        items: Array.from({ length: 7 }, (_, i) => ({
          type: 'tcp' as const,
          id: i + 1,
          nodeId: 7,
          name: `db-${String(i)}`,
          nodeName: 'pi-1',
          applyError: 'port in use',
        })),
      },
    });
    renderInRouter(() => <HomeOverview />);
    const attention = await screen.findByRole('region', { name: /^Needs attention/ });
    expect(screen.queryByRole('heading', { name: 'Create your first node' })).toBeNull();
    const link = (group: RegExp, name: string) =>
      within(within(attention).getByRole('region', { name: group }))
        .getByRole('link', { name })
        .getAttribute('href');
    expect(link(/^Nodes offline/, 'pi-1')).toBe('/nodes/7');
    expect(link(/^Backends down/, 'web on pi-1')).toBe('/nodes/7?httpQ=web&service=http%3A9');
    expect(link(/^Certificates/, 'shop.example.com')).toBe('/domains?q=shop.example.com');
    // Five of each are listed; the rest are one click away.
    const setAside = within(attention).getByRole('region', { name: /^Changes set aside/ });
    expect(within(setAside).getAllByRole('listitem')).toHaveLength(5);
    expect(within(setAside).getByRole('link', { name: 'Show all 7 services set aside' }).getAttribute('href')).toBe(
      '/services?status=set-aside',
    );
    expect(screen.getByTestId('total-services').textContent).toBe('4');
    expect(screen.getByRole('navigation', { name: 'Help and links' })).toBeTruthy();
  });
});
