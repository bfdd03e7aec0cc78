import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildHttpService, buildTcpService, fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { buildNode } from '../../test/fixtures';
import { ServicesPage } from './services-page';

describe('services page', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('asks the server for the view in the URL and its rows’ figures only', async () => {
    const calls = fakeApi((method, path) =>
      path === '/api/services'
        ? {
            status: 200,
            body: {
              data: [
                { type: 'http', node: buildNode(), certificate: null, service: buildHttpService({ id: 9 }) },
                { type: 'tcp', node: buildNode(), certificate: null, service: buildTcpService({ id: 11 }) },
              ],
              page: 2,
              limit: 25,
              total: 27,
            },
          }
        : undefined,
    );
    renderInRouter(() => <ServicesPage />, {
      path: '/services',
      url: '/services?q=web&status=backend-down&kind=http&node=4&domain=app.example.com&sort=node&order=desc&page=2&limit=25',
    });
    await screen.findByText('api');
    const list = calls.find((call) => call.path === '/api/services');
    expect(Object.fromEntries(list?.query ?? [])).toEqual({
      page: '2',
      limit: '25',
      q: 'web',
      kind: 'http',
      status: 'backend-down',
      nodeId: '4',
      domain: 'app.example.com',
      sort: 'node',
      order: 'desc',
    });
    const figures = calls.find((call) => call.path === '/api/observe/services');
    expect(figures?.query.get('services')).toBe('http:9,tcp:11');
  });

  it('says next to “Public” that the node is offline or the certificate failed', async () => {
    fakeApi((method, path) =>
      path === '/api/services'
        ? {
            status: 200,
            body: {
              data: [
                {
                  type: 'http',
                  node: buildNode({ status: 'offline' }),
                  certificate: { state: 'failed', notAfter: null, error: 'NXDOMAIN' },
                  service: buildHttpService({ name: 'shop' }),
                },
              ],
              page: 1,
              limit: 10,
              total: 1,
            },
          }
        : undefined,
    );
    renderInRouter(() => <ServicesPage />, { path: '/services' });
    const row = (await screen.findByText('shop')).closest('tr') as HTMLElement;
    expect(within(row).getAllByText('node offline').length).toBeGreaterThan(0);
    expect(within(row).getAllByText('certificate failed').length).toBeGreaterThan(0);
    expect(within(row).getAllByRole('img', { name: 'Public' }).length).toBeGreaterThan(0);
  });

  it('tells an empty gateway from filters that match nothing', async () => {
    fakeApi();
    renderInRouter(() => <ServicesPage />, { path: '/services', url: '/services?kind=udp' });
    expect(await screen.findByText('No services match these filters.')).toBeTruthy();
  });
});
