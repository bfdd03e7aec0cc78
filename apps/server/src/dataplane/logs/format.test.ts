import { describe, expect, it } from 'vitest';
import { parseAccessLogLine } from './format.js';

const http = (over: Record<string, string>): string =>
  JSON.stringify({
    time: '2026-11-22T12:00:00+00:00',
    type: 'http',
    svc: '3',
    host: 'App.example.com',
    remote: '203.0.113.5',
    method: 'GET',
    uri: '/api?x=1',
    proto: 'HTTP/1.1',
    status: '200',
    bytes: '512',
    upstream_status: '200',
    rt: '0.004',
    ua: 'curl',
    ...over,
  });

describe('parseAccessLogLine', () => {
  it('renders an HTTP request with its level and service identity', () => {
    expect(parseAccessLogLine(http({}))).toEqual({
      domain: 'app.example.com',
      type: 'http',
      serviceId: 3,
      text: '[INFO] 2026-11-22T12:00:00+00:00 203.0.113.5 "GET /api?x=1 HTTP/1.1" 200 512B 0.004s host=app.example.com upstream=200',
    });
  });

  it('marks 4xx as WARN, 5xx and failed upstreams as ERROR', () => {
    expect(parseAccessLogLine(http({ status: '404', upstream_status: '' }))?.text).toMatch(/^\[WARN\] /);
    expect(parseAccessLogLine(http({ status: '301', upstream_status: '', svc: '' }))).toMatchObject({
      serviceId: null,
      text: expect.stringMatching(/^\[INFO\] /) as unknown,
    });
    expect(parseAccessLogLine(http({ status: '502', upstream_status: '502' }))?.text).toMatch(/^\[ERROR\] /);
    expect(parseAccessLogLine(http({ status: '200', upstream_status: '502, 200' }))?.text).toMatch(/^\[ERROR\] /);
  });

  it('renders a stream session, ERROR unless nginx reports 200', () => {
    const line = JSON.stringify({
      time: 't',
      type: 'tcp',
      svc: '7',
      host: '',
      remote: '198.51.100.1',
      proto: 'UDP',
      status: '200',
      rx: '10',
      tx: '20',
      upstream: '10.44.0.2:53',
      duration: '0.010',
    });
    expect(parseAccessLogLine(line)).toEqual({
      domain: null,
      type: 'tcp',
      serviceId: 7,
      text: '[INFO] t 198.51.100.1 UDP 200 rx=10B tx=20B 0.010s upstream=10.44.0.2:53',
      session: { bytesIn: 10, bytesOut: 20, seconds: 0.01, ok: true },
    });
    expect(parseAccessLogLine(line.replace('"status":"200"', '"status":"502"'))?.text).toMatch(/^\[ERROR\] /);
  });

  it('ignores lines that are not ours', () => {
    expect(parseAccessLogLine('not json')).toBeNull();
    expect(parseAccessLogLine('{"type":"other"}')).toBeNull();
  });
});
