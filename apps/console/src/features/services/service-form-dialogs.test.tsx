import { ruleMessages } from '@postern/contract';
import { act, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dismissToast, getToasts } from '../../lib/toast-store';
import { HttpServiceFormDialog, TcpServiceFormDialog } from './service-form-dialogs';
import { LOCAL_SELF_HOST } from './service-form-rules';
import { buildHttpService, buildTcpService, fakeApi, renderWithProviders } from './service-test-fixtures';
import { buildNode } from '../../test/fixtures';
import { activateLanguage, loadMoreTexts } from '../../i18n/i18n';

const input = (label: string) => screen.getByLabelText<HTMLInputElement>(label);
const select = (label: string) => screen.getByLabelText<HTMLSelectElement>(label);
const save = () => act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save' })));

describe('HTTP service form', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    for (const toast of getToasts()) dismissToast(toast.id);
  });

  it('starts with http, port 80 and path /, the host fixed to a plain node', () => {
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    expect(select('Backend Protocol').value).toBe('http');
    expect(input('Backend Port').value).toBe('80');
    expect(input('Public HTTP Path').value).toBe('/');
    expect(input('Backend Host').disabled).toBe(true);
    expect(input('Backend Host').value).toBe('10.0.0.4');
    expect(input('Public HTTP Path').disabled).toBe(false);
  });

  it('lets a gateway choose the backend host, and requires it', async () => {
    fakeApi();
    renderWithProviders(<HttpServiceFormDialog node={buildNode({ isGateway: true })} open onClose={vi.fn()} />);
    expect(input('Backend Host').disabled).toBe(false);
    fireEvent.change(input('Service Name'), { target: { value: 'nas' } });
    await save();
    expect(screen.getByText('This field is required')).toBeTruthy();
  });

  it("locks path, protocol, port and host of the server's own service on the local node", () => {
    fakeApi();
    const node = buildNode({ id: 1, isLocal: true, address: null });
    const service = buildHttpService({ nodeId: 1, backendHost: LOCAL_SELF_HOST, backendPort: 3000 });
    renderWithProviders(<HttpServiceFormDialog node={node} service={service} open onClose={vi.fn()} />);
    for (const label of ['Public HTTP Path', 'Backend Host', 'Backend Port']) expect(input(label).disabled).toBe(true);
    expect(select('Backend Protocol').disabled).toBe(true);
    expect(input('Service Name').disabled).toBe(false);
  });

  it('says where a service published by Docker labels comes from, and nothing for one a person made', () => {
    fakeApi();
    const source = { kind: 'docker-labels' as const, container: 'whoami-1', key: 'http', digest: 'a'.repeat(64) };
    const view = renderWithProviders(
      <HttpServiceFormDialog node={buildNode()} service={buildHttpService({ source })} open onClose={vi.fn()} />,
    );
    expect(screen.getByLabelText('Source').textContent).toContain('Docker labels of container whoami-1');
    view.unmount();
    renderWithProviders(
      <HttpServiceFormDialog node={buildNode()} service={buildHttpService()} open onClose={vi.fn()} />,
    );
    expect(screen.queryByLabelText('Source')).toBeNull();
  });

  it('validates a field as it is typed and blurred', () => {
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    fireEvent.change(input('Public HTTP Path'), { target: { value: 'api' } });
    expect(screen.getByText(ruleMessages.path)).toBeTruthy();
    fireEvent.change(input('Backend Port'), { target: { value: '' } });
    expect(screen.getByText('This field is required')).toBeTruthy();
    // Without a domain, /api belongs to the console's session: the form says so before the server would (form-wide
    // rules run once the fields themselves are valid).
    fireEvent.change(input('Backend Port'), { target: { value: '8080' } });
    fireEvent.change(input('Public HTTP Path'), { target: { value: '/api/auth/login' } });
    expect(screen.getByText(/^This field must not be \/api or a path below it/)).toBeTruthy();
  });

  it('speaks German: labels, help and the form’s own messages (error.<code>), the Docker labels note in its order', async () => {
    await activateLanguage('de');
    await loadMoreTexts();
    try {
      const source = { kind: 'docker-labels' as const, container: 'whoami-1', key: 'http', digest: 'a'.repeat(64) };
      renderWithProviders(
        <HttpServiceFormDialog node={buildNode()} service={buildHttpService({ source })} open onClose={vi.fn()} />,
      );
      expect(screen.getByRole('dialog', { name: 'HTTP-Dienst bearbeiten' })).toBeTruthy();
      expect(screen.getByLabelText('Herkunft').textContent).toBe(
        'Veröffentlicht durch die Docker-Labels des Containers whoami-1 auf diesem Knoten (postern.http.*). Ihre ' +
          'Änderungen hier gelten, bis sich die Labels des Containers ändern; für eine dauerhafte Änderung ändern Sie ' +
          'seine Labels.',
      );
      fireEvent.change(screen.getByLabelText('Backend-Port'), { target: { value: '' } });
      expect(screen.getByText('Dieses Feld ist erforderlich')).toBeTruthy();
      fireEvent.change(screen.getByLabelText('Öffentlicher HTTP-Pfad'), { target: { value: 'api' } });
      expect(screen.queryByText(ruleMessages.path)).toBeNull();
    } finally {
      await activateLanguage('en');
    }
  });

  it('creates with POST, then shows the public address in the service-exposed dialog', async () => {
    const created = buildHttpService({ name: 'api', publicAccess: 'https://app.example.com/app' });
    const calls = fakeApi((method) => (method === 'POST' ? { status: 201, body: created } : undefined));
    const onClose = vi.fn();
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={onClose} />);
    fireEvent.change(input('Service Name'), { target: { value: 'api' } });
    fireEvent.change(input('Public HTTP Path'), { target: { value: '/app' } });
    fireEvent.change(input('Backend Port'), { target: { value: '8080' } });
    await save();

    const post = calls.find((call) => call.method === 'POST');
    expect(post?.path).toBe('/api/services/4/http');
    expect(post?.body).toMatchObject({ name: 'api', pathLocation: '/app', backendProto: 'http', backendPort: 8080 });
    expect(post?.body).not.toHaveProperty('backendHost');
    expect(await screen.findByText('Your Service is Now Publicly Available')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'https://app.example.com/app' })).toBeTruthy();
    expect(onClose).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Got it!' }));
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('closes without the exposed dialog when the gateway stored the service but could not serve it (by code)', async () => {
    const calls = fakeApi((method) =>
      method === 'POST'
        ? { status: 400, body: { message: 'nginx: duplicate location "/app"', code: 'dataplane_rejected' } }
        : undefined,
    );
    const onClose = vi.fn();
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={onClose} />);
    fireEvent.change(input('Service Name'), { target: { value: 'api' } });
    fireEvent.change(input('Public HTTP Path'), { target: { value: '/app' } });
    await save();
    expect(getToasts().map((toast) => toast.message)).toContain('nginx: duplicate location "/app"');
    expect(onClose).toHaveBeenCalledOnce();
    expect(screen.queryByText('Your Service is Now Publicly Available')).toBeNull();
    // Stored: sending it again would repeat it, and the list is read again to show the service with its applyError.
    expect(calls.filter((call) => call.method === 'POST')).toHaveLength(1);
  });

  it('keeps the form open for a plain 400 (nothing was stored)', async () => {
    fakeApi((method) =>
      method === 'POST'
        ? { status: 400, body: { message: 'This node has reached its limit', code: 'bad_request' } }
        : undefined,
    );
    const onClose = vi.fn();
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} open onClose={onClose} />);
    fireEvent.change(input('Service Name'), { target: { value: 'api' } });
    fireEvent.change(input('Public HTTP Path'), { target: { value: '/app' } });
    await save();
    expect(getToasts().map((toast) => toast.message)).toContain('This node has reached its limit');
    expect(onClose).not.toHaveBeenCalled();
    expect(screen.getByRole('button', { name: 'Save' })).toBeTruthy();
    log.mockRestore();
  });

  it('edits with PATCH and shows a 422 under its field', async () => {
    const service = buildHttpService();
    const calls = fakeApi((method) =>
      method === 'PATCH'
        ? {
            status: 422,
            body: {
              message: 'Validation failed',
              errors: {
                body: [{ field: 'pathLocation', message: 'This domain and path are already used by another service' }],
              },
            },
          }
        : undefined,
    );
    renderWithProviders(<HttpServiceFormDialog node={buildNode()} service={service} open onClose={vi.fn()} />);
    expect(input('Service Name').value).toBe('api');
    await save();
    expect(calls.find((call) => call.method === 'PATCH')?.path).toBe('/api/services/4/http/9');
    expect(await screen.findByText('This domain and path are already used by another service')).toBeTruthy();
  });
});

describe('TCP service form', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('starts with tcp, backend port 1883 and an empty (auto-assigned) public port', () => {
    renderWithProviders(<TcpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    expect(select('Protocol').value).toBe('tcp');
    expect(input('Backend Port').value).toBe('1883');
    expect(input('Public Port (Optional)').value).toBe('');
    expect(input('Backend Host').disabled).toBe(true);
  });

  it('turns TLS termination off and locks it for UDP', () => {
    renderWithProviders(<TcpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    const ssl = input('Enable SSL (TLS termination)');
    fireEvent.click(ssl);
    expect(ssl.checked).toBe(true);
    fireEvent.change(select('Protocol'), { target: { value: 'udp' } });
    expect(ssl.checked).toBe(false);
    expect(ssl.disabled).toBe(true);
  });

  it('lets the local node choose the backend host', () => {
    renderWithProviders(<TcpServiceFormDialog node={buildNode({ isLocal: true })} open onClose={vi.fn()} />);
    expect(input('Backend Host').disabled).toBe(false);
  });

  it('sends port null so the server assigns one, then shows the assigned address', async () => {
    const calls = fakeApi((method) => (method === 'POST' ? { status: 201, body: buildTcpService() } : undefined));
    renderWithProviders(<TcpServiceFormDialog node={buildNode()} open onClose={vi.fn()} />);
    fireEvent.change(input('Service Name'), { target: { value: 'mqtt' } });
    await save();
    expect(calls.find((call) => call.method === 'POST')?.body).toMatchObject({
      name: 'mqtt',
      proto: 'tcp',
      port: null,
      backendPort: 1883,
    });
    expect(await screen.findByText('tcp://gw.example.com:30001')).toBeTruthy();
  });
});
