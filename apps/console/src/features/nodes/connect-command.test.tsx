import type { NodeCreated, SystemInfo } from '@postern/contract';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dockerCommand, helmCommand, installCommand } from '@postern/contract';
import { buildNode } from '../../test/fixtures';
import { connectCommand, GATEWAY_URL_PLACEHOLDER } from './connect-command';
import { NodeConnectCard } from './node-detail-cards';
import { NodeReadyDialog } from './node-ready-dialog';

const PIN = 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
const nodeInstall = {
  script: true,
  image: 'ghcr.io/postern/node:0.1.0',
  chart: 'oci://ghcr.io/postern/charts/postern-node',
  chartVersion: '0.1.0',
};
const selfSigned: SystemInfo = {
  publicUrl: 'https://gw.example.test:8443',
  certificate: { selfSigned: true, pin: PIN },
  nodeInstall,
};

const node = buildNode({ id: 5, name: 'office', address: '10.8.0.5', status: 'offline' });
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
      connectCommand('pstn_x', {
        publicUrl: 'https://gw.example.test',
        certificate: { selfSigned: false, pin: PIN },
        nodeInstall,
      }),
    ).toBe('postern connect --url https://gw.example.test --token pstn_x');
    expect(connectCommand('pstn_x', { publicUrl: 'https://gw.example.test', certificate: null, nodeInstall })).toBe(
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
    const install = await screen.findByRole<HTMLTextAreaElement>('textbox', { name: 'Install command' });
    expect(install.value).toBe(installCommand('pstn_secret', selfSigned).replaceAll('pstn_secret', 'pstn_••••••••'));
    expect(install.value.split('\n')).toHaveLength(3);
    fireEvent.click(screen.getByRole('button', { name: 'Copy install command' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith(installCommand('pstn_secret', selfSigned)));
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
    expect(screen.getByRole<HTMLTextAreaElement>('textbox', { name: 'Docker command' }).value).not.toContain(
      'pstn_secret',
    );
    fireEvent.click(screen.getByRole('button', { name: 'Copy docker command' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith(dockerCommand('pstn_secret', selfSigned)));
    expect(dockerCommand('pstn_secret', selfSigned)).toContain('ghcr.io/postern/node:0.1.0');
    fireEvent.click(screen.getByRole('button', { name: 'Helm' }));
    fireEvent.click(screen.getByRole('button', { name: 'Copy helm command' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith(helmCommand('pstn_secret', selfSigned)));
    fireEvent.click(screen.getByRole('button', { name: 'WireGuard' }));
    expect(screen.getByRole('button', { name: 'Download WireGuard config' })).toBeTruthy();
    // The token's one appearance on screen: its own field.
    expect(screen.getAllByDisplayValue(/pstn_secret/).map((input) => input.getAttribute('aria-label'))).toEqual([
      'Token',
    ]);
    expect(fetchMock.mock.calls.map(([url]) => url).filter((url) => url === '/api/system/info')).toHaveLength(1);
  });

  it('offers the connect command alone when the gateway does not serve the client', async () => {
    serveInfo({ ...selfSigned, nodeInstall: { ...nodeInstall, script: false } });
    renderWithQueries(<NodeReadyDialog node={created} onClose={() => undefined} />);
    expect(await commandField()).toContain('postern connect');
    expect(screen.queryByRole('textbox', { name: 'Install command' })).toBeNull();
    expect(screen.getByText(/does not serve the node client/)).toBeTruthy();
  });

  it('shows the WireGuard config as a QR code, the library loaded only then', async () => {
    const config = '[Interface]\nPrivateKey = cHJpdmF0ZQ==\nAddress = 10.8.0.5/32\n';
    vi.stubGlobal(
      'fetch',
      vi.fn((input: string) =>
        Promise.resolve(
          input === '/api/system/info'
            ? new Response(JSON.stringify(selfSigned))
            : input === '/api/nodes/5/download'
              ? new Response(config, {
                  headers: {
                    'content-type': 'text/plain',
                    'content-disposition': 'attachment; filename="office.conf"',
                  },
                })
              : new Response('{"message":"boom"}', { status: 500 }),
        ),
      ),
    );
    renderWithQueries(<NodeReadyDialog node={created} onClose={() => undefined} />);
    fireEvent.click(screen.getByRole('button', { name: 'WireGuard' }));
    const image = await screen.findByRole<HTMLImageElement>('img', {
      name: "QR code of this node's WireGuard configuration",
    });
    const { default: QRCode } = await import('qrcode');
    const expected = await QRCode.toString(config, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
    expect(decodeURIComponent(image.src.replace(/^data:image\/svg\+xml;charset=utf-8,/, ''))).toBe(expected);
  });

  it('asks nothing while the dialog is closed', () => {
    const fetchMock = serveInfo(selfSigned);
    renderWithQueries(<NodeReadyDialog node={null} onClose={() => undefined} />);
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("'Connect This Node' shows the command with the token placeholder and no pin for a CA-issued certificate", async () => {
    serveInfo({ publicUrl: 'https://gw.example.test', certificate: { selfSigned: false, pin: PIN }, nodeInstall });
    renderWithQueries(<NodeConnectCard node={node} />);
    expect(await commandField()).toBe('postern connect --url https://gw.example.test --token <YOUR_TOKEN>');
  });

  it('falls back to a URL placeholder when the facts cannot be read', async () => {
    serveInfo(null);
    renderWithQueries(<NodeConnectCard node={node} />);
    expect(await commandField()).toBe(`postern connect --url ${GATEWAY_URL_PLACEHOLDER} --token <YOUR_TOKEN>`);
  });
});
