import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServiceList } from './service-list';
import { buildHttpService, fakeApi, renderInRouter } from './service-test-fixtures';

describe('services published by Docker labels', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('are marked in the list with the container and labels they come from; others are not', async () => {
    const source = { kind: 'docker-labels', container: 'blog', key: 'http', digest: 'a'.repeat(64) } as const;
    fakeApi((method, path) =>
      method === 'GET' && path === '/api/services/4/http'
        ? {
            status: 200,
            body: {
              data: [
                buildHttpService({ id: 1, name: 'by-labels', source }),
                buildHttpService({ id: 2, name: 'by-hand' }),
              ],
              page: 1,
              limit: 5,
              total: 2,
            },
          }
        : undefined,
    );
    renderInRouter(() => <ServiceList type="http" scope={{ kind: 'node', nodeId: 4 }} empty={null} />);
    await screen.findByText('by-hand');
    const notes = screen.getAllByRole('note');
    expect(notes.map((note) => note.getAttribute('aria-label'))).toEqual([
      'Published by the Docker labels of container blog (postern.http.*)',
    ]);
    expect(notes[0]?.closest('tr')?.textContent).toContain('by-labels');
  });
});
