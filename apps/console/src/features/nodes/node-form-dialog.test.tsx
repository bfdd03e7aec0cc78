import type { Node, NodeCreated } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildNode } from '../../test/fixtures';
import { withGateway, nodeFormValues } from './node-form';
import { NodeFormDialog } from './node-form-dialog';

const createdNode: NodeCreated = {
  ...buildNode({
    id: 5,
    name: 'office',
    address: '10.8.0.5',
    isGateway: true,
    gatewayNetwork: '192.168.10.0/24',
    gatewayNetworks: ['192.168.10.0/24'],
    status: 'offline',
  }),
  token: 'pstn_secret',
};

function renderDialog(onCreated = vi.fn(), node?: Node) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <NodeFormDialog open node={node ?? null} onClose={() => undefined} onCreated={onCreated} />
    </QueryClientProvider>,
  );
  return onCreated;
}

describe('node form gateway rule (console spec: Validation rules)', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('clears gatewayNetwork when the gateway option is unchecked', () => {
    const values = { ...nodeFormValues(), isGateway: true, gatewayNetwork: '10.1.0.0/16' };
    expect(withGateway(values, false)).toMatchObject({ isGateway: false, gatewayNetwork: '' });
    expect(withGateway(values, true).gatewayNetwork).toBe('10.1.0.0/16');
  });

  it('shows the subnet field for gateways only and forgets it when unchecked', () => {
    renderDialog();
    const gateway = screen.getByLabelText('This node is a gateway');
    expect(screen.queryByLabelText('Gateway Network')).toBeNull();
    fireEvent.click(gateway);
    fireEvent.change(screen.getByLabelText('Gateway Network'), { target: { value: '192.168.10.0/24' } });
    fireEvent.click(gateway);
    expect(screen.queryByLabelText('Gateway Network')).toBeNull();
    fireEvent.click(gateway);
    expect(screen.getByLabelText<HTMLInputElement>('Gateway Network').value).toBe('');
  });

  it('requires a subnet with a CIDR for a gateway', async () => {
    renderDialog();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'office' } });
    fireEvent.click(screen.getByLabelText('This node is a gateway'));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    expect(screen.getByText('This field is required')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Gateway Network'), { target: { value: '192.168.10.1' } });
    expect(screen.getByText('This field must be a valid IP address with a CIDR')).toBeTruthy();
  });

  it("offers the tokens' right to set the networks for gateways only, off by default, and drops it with the gateway", () => {
    renderDialog();
    const label = "Let this node's access tokens set its networks";
    expect(screen.queryByLabelText(label)).toBeNull();
    const gateway = screen.getByLabelText('This node is a gateway');
    fireEvent.click(gateway);
    const allow = screen.getByLabelText<HTMLInputElement>(label);
    expect(allow.checked).toBe(false);
    fireEvent.click(allow);
    fireEvent.click(gateway);
    fireEvent.click(gateway);
    expect(screen.getByLabelText<HTMLInputElement>(label).checked).toBe(false);
  });

  it('edits the setting with PATCH and shows why part of the node is not served', async () => {
    const fetchMock = vi.fn(() => Promise.resolve(new Response(JSON.stringify(createdNode), { status: 200 })));
    vi.stubGlobal('fetch', fetchMock);
    const applyError = "Not routed (set by the node's token; the gateway needs it): 10.22.0.0/24 (...)";
    renderDialog(vi.fn(), { ...createdNode, allowTokenNetworks: true, applyError });
    expect(screen.getByText(`Not all of this node is served: ${applyError}`)).toBeTruthy();
    fireEvent.click(screen.getByLabelText("Let this node's access tokens set its networks"));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect([url, init.method]).toEqual(['/api/nodes/5', 'PATCH']);
    expect(JSON.parse(init.body as string)).toMatchObject({ isGateway: true, allowTokenNetworks: false });
  });

  it('creates the node with POST and hands over the one-time token', async () => {
    const fetchMock = vi.fn(() => Promise.resolve(new Response(JSON.stringify(createdNode), { status: 201 })));
    vi.stubGlobal('fetch', fetchMock);
    const onCreated = renderDialog();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'office' } });
    fireEvent.click(screen.getByLabelText('This node is a gateway'));
    fireEvent.change(screen.getByLabelText('Gateway Network'), { target: { value: '192.168.10.0/24' } });
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect([url, init.method]).toEqual(['/api/nodes', 'POST']);
    expect(JSON.parse(init.body as string)).toMatchObject({
      name: 'office',
      isGateway: true,
      gatewayNetwork: '192.168.10.0/24',
    });
    expect(onCreated).toHaveBeenCalledWith(expect.objectContaining({ token: 'pstn_secret' }));
  });
});
