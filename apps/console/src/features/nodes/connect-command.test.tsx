import type { Node, NodeCreated, SystemInfo } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectCommand, GATEWAY_URL_PLACEHOLDER } from './connect-command';
import { NodeConnectCard } from './node-detail-cards';
import { NodeReadyDialog } from './node-ready-dialog';

const PIN = 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
const selfSigned: SystemInfo = {
  publicUrl: 'https://gw.example.test:8443',
  certificate: { selfSigned: true, pin: PIN },
};

const node: Node = {
  id: 5,
  name: 'office',
  address: '10.8.0.5',
  allowInternet: false,
  isGateway: false,
  gatewayNetwork: null,
  gatewayNetworks: [],
  isLocal: false,
  enabled: true,
  status: 'offline',
  clientIp: null,
  latestHandshakeTimestamp: null,
  transferRx: 0,
  transferTx: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const created: NodeCreated = { ...node, token: 'pstn_secret' };

/** The API answers GET /api/system/info with `info`, or fails with `status`. */
function serveInfo(info: SystemInfo | null, status = 200) {
  const fetchMock = vi.fn((input: string) =>
    Promise.resolve(
      input === '/api/system/info' && info !== null
        ? new Response(JSON.stringify(info), { status })
        : new Response('{"message":"boom"}', { status: 500 }),
    ),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

function renderWithQueries(children: ReactNode) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(<QueryClientProvider client={client}>{children}</QueryClientProvider>);
}

const commandField = async () =>
  (await screen.findByRole<HTMLInputElement>('textbox', { name: 'Connect command' })).value;

describe('connectCommand', () => {
  it("uses the gateway's public URL and adds the pin only for a self-signed certificate", () => {
    expect(connectCommand('pstn_x', selfSigned)).toBe(
      `postern connect --url https://gw.example.test:8443 --token pstn_x --pin ${PIN}`,
    );
    expect(
      connectCommand('pstn_x', { publicUrl: 'https://gw.example.test', certificate: { selfSigned: false, pin: PIN } }),
    ).toBe('postern connect --url https://gw.example.test --token pstn_x');
    expect(connectCommand('pstn_x', { publicUrl: 'https://gw.example.test', certificate: null })).toBe(
      'postern connect --url https://gw.example.test --token pstn_x',
    );
    expect(connectCommand('pstn_x', undefined)).toBe(`postern connect --url ${GATEWAY_URL_PLACEHOLDER} --token pstn_x`);
  });
});

describe('connect command in the console', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("'Your Node is Ready' copies each command with the public URL, the new token and the pin; the token is on screen once", async () => {
    const fetchMock = serveInfo(selfSigned);
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal('navigator', { clipboard: { writeText } });
    renderWithQueries(<NodeReadyDialog node={created} onClose={() => undefined} />);
    expect(await commandField()).toBe(
      `postern connect --url https://gw.example.test:8443 --token pstn_•••••••• --pin ${PIN}`,
    );
    expect(await commandField()).not.toContain(window.location.host);
    fireEvent.click(screen.getByRole('button', { name: 'Copy connect command' }));
    await waitFor(() =>
      expect(writeText).toHaveBeenLastCalledWith(
        `postern connect --url https://gw.example.test:8443 --token pstn_secret --pin ${PIN}`,
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Docker' }));
    expect(screen.getByRole<HTMLInputElement>('textbox', { name: 'Docker command' }).value).not.toContain(
      'pstn_secret',
    );
    fireEvent.click(screen.getByRole('button', { name: 'Copy docker command' }));
    await waitFor(() =>
      expect(writeText).toHaveBeenLastCalledWith(
        expect.stringMatching(
          /^docker run .*-e POSTERN_URL=https:\/\/gw\.example\.test:8443 -e POSTERN_TOKEN=pstn_secret -e POSTERN_PIN=sha256:\S+ postern\/node$/,
        ),
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Helm' }));
    fireEvent.click(screen.getByRole('button', { name: 'Copy helm command' }));
    await waitFor(() =>
      expect(writeText).toHaveBeenLastCalledWith(
        `helm install postern-node deploy/helm/postern-node --set gatewayUrl=https://gw.example.test:8443 --set token.value=pstn_secret --set gatewayPin=${PIN}`,
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'WireGuard' }));
    expect(screen.getByRole('button', { name: 'Download WireGuard config' })).toBeTruthy();
    // The token's one appearance on screen: its own field.
    expect(screen.getAllByDisplayValue(/pstn_secret/).map((input) => input.getAttribute('aria-label'))).toEqual([
      'Token',
    ]);
    expect(fetchMock.mock.calls.map(([url]) => url)).toEqual(['/api/system/info']);
  });

  it('asks nothing while the dialog is closed', () => {
    const fetchMock = serveInfo(selfSigned);
    renderWithQueries(<NodeReadyDialog node={null} onClose={() => undefined} />);
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("'Connect This Node' shows the command with the token placeholder and no pin for a CA-issued certificate", async () => {
    serveInfo({ publicUrl: 'https://gw.example.test', certificate: { selfSigned: false, pin: PIN } });
    renderWithQueries(<NodeConnectCard node={node} />);
    expect(await commandField()).toBe('postern connect --url https://gw.example.test --token <YOUR_TOKEN>');
  });

  it('falls back to a URL placeholder when the facts cannot be read', async () => {
    serveInfo(null);
    renderWithQueries(<NodeConnectCard node={node} />);
    expect(await commandField()).toBe(`postern connect --url ${GATEWAY_URL_PLACEHOLDER} --token <YOUR_TOKEN>`);
  });
});
