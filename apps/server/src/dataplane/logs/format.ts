import type { LogLine } from '../types.js';

// Access-log JSON (see nginx/render-http.ts and render-stream.ts log_format) → the console line. The level
// marker comes first so the viewer can colour by it: [INFO] 2xx/3xx, [WARN] 4xx, [ERROR] 5xx and upstream
// failures; a stream session is [INFO] only when nginx reports 200.

type Fields = Record<string, unknown>;

const str = (fields: Fields, key: string): string => (typeof fields[key] === 'string' ? fields[key] : '');

function httpLevel(status: number, upstreamStatus: string): string {
  const upstreamFailed = upstreamStatus
    .split(/[,:]\s*/)
    .some((s) => (s.trim() === '' ? false : !/^[1-4]\d\d$/.test(s.trim())));
  if (status >= 500 || (upstreamStatus !== '' && upstreamFailed)) return '[ERROR]';
  if (status >= 400) return '[WARN]';
  return '[INFO]';
}

export function parseAccessLogLine(raw: string): LogLine | null {
  let fields: Fields;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null) return null;
    fields = parsed as Fields;
  } catch {
    return null;
  }
  const serviceId = /^\d+$/.test(str(fields, 'svc')) ? Number(str(fields, 'svc')) : null;
  const host = str(fields, 'host').toLowerCase() || null;
  const status = Number(str(fields, 'status')) || 0;
  if (str(fields, 'type') === 'http') {
    const upstream = str(fields, 'upstream_status');
    const text =
      `${httpLevel(status, upstream)} ${str(fields, 'time')} ${str(fields, 'remote')} "${str(fields, 'method')} ${str(fields, 'uri')} ${str(fields, 'proto')}" ` +
      `${status} ${str(fields, 'bytes')}B ${str(fields, 'rt')}s${host ? ` host=${host}` : ''}${upstream ? ` upstream=${upstream}` : ''}`;
    return { domain: host, type: 'http', serviceId, text };
  }
  if (str(fields, 'type') === 'tcp') {
    const text =
      `${status === 200 ? '[INFO]' : '[ERROR]'} ${str(fields, 'time')} ${str(fields, 'remote')} ${str(fields, 'proto')} ${status} ` +
      `rx=${str(fields, 'rx')}B tx=${str(fields, 'tx')}B ${str(fields, 'duration')}s${str(fields, 'upstream') ? ` upstream=${str(fields, 'upstream')}` : ''}`;
    const number = (key: string): number => Number(str(fields, key)) || 0;
    return {
      domain: host,
      type: 'tcp',
      serviceId,
      text,
      session: { bytesIn: number('rx'), bytesOut: number('tx'), seconds: number('duration'), ok: status === 200 },
    };
  }
  return null;
}
