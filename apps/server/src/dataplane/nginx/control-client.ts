import { request } from 'node:http';

// Talks to the HTTP instance's control socket (lua/postern.lua `control()`): small JSON requests over a unix
// socket only root can reach. Keep-alive is off: requests are rare and a restarted nginx must never be handed
// a socket of the old one.

export class ControlError extends Error {
  override name = 'ControlError';
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface ControlClient {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export function createControlClient(socketPath: string, timeoutMs = 10_000): ControlClient {
  function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<T>((resolve, reject) => {
      const req = request(
        {
          socketPath,
          path,
          method,
          agent: false,
          timeout: timeoutMs,
          headers: {
            Host: 'postern-control',
            ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = null;
            try {
              parsed = JSON.parse(text);
            } catch {
              // Not JSON: nginx's own error page (e.g. the Lua module failed to load).
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              resolve(parsed as T);
              return;
            }
            const reason =
              typeof parsed === 'object' && parsed !== null && 'error' in parsed
                ? String(parsed.error)
                : text.trim().slice(0, 200);
            reject(new ControlError(`nginx control ${method} ${path}: ${status} ${reason}`, status));
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(new ControlError(`nginx control ${method} ${path}: no answer within ${timeoutMs} ms`, null)),
      );
      req.on('error', (err) =>
        reject(
          err instanceof ControlError ? err : new ControlError(`nginx control ${method} ${path}: ${err.message}`, null),
        ),
      );
      req.end(payload);
    });
  }
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}
