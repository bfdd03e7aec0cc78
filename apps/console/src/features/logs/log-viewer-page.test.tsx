import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
});
