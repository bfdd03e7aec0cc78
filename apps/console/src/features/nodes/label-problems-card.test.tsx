import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, renderInRouter } from '../services/service-test-fixtures';
import { LabelProblemsCard } from './label-problems-card';

const report = (body: unknown) => (method: string, path: string) =>
  method === 'GET' && path === '/api/nodes/4/label-problems' ? { status: 200, body } : undefined;

describe('the label problems of a node', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('lists what is wrong per container, the tenant’s text as text', async () => {
    fakeApi(
      report({
        checkedAt: new Date().toISOString(),
        problems: [
          { container: 'blog', key: 'http', message: 'postern.http.domain: This field must be a valid domain name' },
          { container: 'evil', message: '<img src=x onerror=alert(1)> unknown label' },
        ],
      }),
    );
    renderInRouter(() => <LabelProblemsCard nodeId={4} />);
    const list = await screen.findByRole('list', { name: 'Label problems' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows.map((row) => row.textContent)).toEqual([
      'bloghttppostern.http.domain: This field must be a valid domain name',
      'evil<img src=x onerror=alert(1)> unknown label',
    ]);
    expect(document.querySelector('img')).toBeNull();
    expect(screen.getByRole('heading', { name: 'Docker Labels' })).toBeTruthy();
  });

  it('says all is well when the agent reported no problem, and shows nothing for a node without one', async () => {
    fakeApi(report({ checkedAt: new Date().toISOString(), problems: [] }));
    renderInRouter(() => <LabelProblemsCard nodeId={4} />);
    expect(await screen.findByText(/Every labelled container of this node is published/)).toBeTruthy();
    vi.unstubAllGlobals();
    document.body.innerHTML = '';

    const calls = fakeApi(report({ checkedAt: null, problems: [] }));
    renderInRouter(() => (
      <>
        <p>page</p>
        <LabelProblemsCard nodeId={4} />
      </>
    ));
    await screen.findByText('page');
    await vi.waitFor(() => expect(calls.some((c) => c.path === '/api/nodes/4/label-problems')).toBe(true));
    expect(screen.queryByRole('heading', { name: 'Docker Labels' })).toBeNull();
  });
});
