import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeEventSource } from '../../test/fake-event-source';
import { renderInRouter } from '../services/service-test-fixtures';
import { DomainLogsPage, ServiceLogsPage } from './log-viewer-page';

class SilentEventSource {
  static urls: string[] = [];
  onmessage = null;
  onerror = null;
  constructor(url: string) {
    SilentEventSource.urls.push(url);
  }
  close(): void {}
}

const crumbs = () => Array.from(screen.getByRole('navigation', { name: 'Breadcrumb' }).querySelectorAll('li'));

describe('log viewer pages', () => {
  beforeEach(() => {
    SilentEventSource.urls = [];
    vi.stubGlobal('EventSource', SilentEventSource);
  });
  afterEach(() => vi.unstubAllGlobals());

  it('shows Domains > {domain} > Real Time Logs and follows that domain', async () => {
    renderInRouter(() => <DomainLogsPage />, { path: '/domains/$domain/logs', url: '/domains/app.example.com/logs' });
    await screen.findByRole('log');
    expect(crumbs().map((li) => li.textContent)).toEqual(['Domains', 'app.example.com', 'Real Time Logs']);
    expect(screen.getByRole('link', { name: 'Domains' }).getAttribute('href')).toBe('/domains');
    expect(new URL(SilentEventSource.urls[0] ?? '', 'http://x').searchParams.get('domain')).toBe('app.example.com');
  });

  it('shows Nodes > {TYPE} Services (to the node) > Real Time Logs and follows that service', async () => {
    renderInRouter(() => <ServiceLogsPage />, { path: '/nodes/$nodeId/$type/$id/logs', url: '/nodes/4/tcp/11/logs' });
    await screen.findByRole('log');
    expect(crumbs().map((li) => li.textContent)).toEqual(['Nodes', 'TCP Services', 'Real Time Logs']);
    expect(screen.getByRole('link', { name: 'TCP Services' }).getAttribute('href')).toBe('/nodes/4');
    const query = new URL(SilentEventSource.urls[0] ?? '', 'http://x').searchParams;
    expect([query.get('type'), query.get('id')]).toEqual(['tcp', '11']);
  });

  it('holds the lines still while paused, says how many wait, and shows only the lines holding a text', async () => {
    FakeEventSource.opened = [];
    vi.stubGlobal('EventSource', FakeEventSource);
    renderInRouter(() => <DomainLogsPage />, { path: '/domains/$domain/logs', url: '/domains/app.example.com/logs' });
    await screen.findByRole('log');
    const lines = () => within(screen.getByRole('log')).getAllByRole('listitem');
    act(() => FakeEventSource.latest()?.push(['[INFO] GET /a', '[ERROR] GET /b']));
    expect(lines()).toHaveLength(2);

    fireEvent.click(screen.getByRole('button', { name: 'Pause' }));
    act(() => FakeEventSource.latest()?.push(['[INFO] GET /c', '[INFO] GET /d', '[INFO] GET /e']));
    expect(lines()).toHaveLength(2);
    expect(screen.getByText(/3 new lines waiting/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Resume' }));
    expect(lines()).toHaveLength(5);
    expect(screen.queryByText(/Paused/)).toBeNull();

    fireEvent.change(screen.getByLabelText('Show only lines containing'), { target: { value: ' /B ' } });
    expect(lines().map((item) => item.textContent)).toEqual(['[ERROR] GET /b']);
    fireEvent.change(screen.getByLabelText('Show only lines containing'), { target: { value: 'nothing' } });
    expect(screen.getByText('No lines contain “nothing”.')).toBeTruthy();
  });
});
