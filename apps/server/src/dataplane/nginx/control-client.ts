import { request } from 'node:http';

// Talks to the HTTP instance's control socket (lua/postern.lua `control()`): small JSON requests over a unix
// socket only root can reach. Keep-alive is off: requests are rare and a restarted nginx must never be handed
// a socket of the old one. What goes wrong becomes one plain sentence: it reaches the API's answers and the console
// (never nginx's HTML error page, never raw bytes of an answer).

/** A change nginx had no room for (507): refused whole, so it holds what it held unless `intact` is false. */
export interface Refusal {
  dict: string;
  /** Bytes the change would take, slab-rounded. */
  need: number;
  /** Free pages plus what the change itself frees. */
  free: number;
  /** Free pages before the change. */
  freeSpace: number;
  capacity: number;
  intact: boolean;
}

export class ControlError extends Error {
  override name = 'ControlError';
  constructor(
    message: string,
    readonly status: number | null,
    readonly refusal: Refusal | null = null,
  ) {
    super(message);
  }
}

export interface ControlClient {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

const DICT_LABELS: Record<string, string> = {
  gw_routes: 'routes dictionary',
  gw_certs: 'certificate dictionary',
  gw_acme: 'ACME answer dictionary',
  gw_access: 'access dictionary',
};

export const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);

/** "its routes dictionary (64 MiB, 0.2 MiB free) has no room for a change of 3.1 MiB" (whole pages). */
export function describeRefusal(refusal: Refusal): string {
  const label = DICT_LABELS[refusal.dict] ?? 'shared dictionary';
  const size = refusal.need > 0 ? `a change of ${mib(refusal.need)} MiB` : 'this change';
  return `its ${label} (${mib(refusal.capacity)} MiB, ${mib(refusal.freeSpace)} MiB free) has no room for ${size}`;
}

function toRefusal(value: Record<string, unknown>): Refusal | null {
  const n = (key: string): number | null =>
    typeof value[key] === 'number' && Number.isFinite(value[key]) ? value[key] : null;
  const [need, free, freeSpace, capacity] = [n('need'), n('free'), n('free_space'), n('capacity')];
  if (typeof value.dict !== 'string' || need === null || free === null || capacity === null) return null;
  return { dict: value.dict, need, free, freeSpace: freeSpace ?? free, capacity, intact: value.intact === true };
}

/** What nginx's own error pages (not the Lua module's JSON) mean for a control request. */
function describeStatus(status: number): string {
  if (status === 413) return 'the change is larger than its control socket accepts';
  if (status === 404) return 'it has no such control endpoint (an older Lua module?)';
  if (status >= 500) return `it failed to answer (status ${status}; its error log says why)`;
  return `it refused the request (status ${status})`;
}

/** A message from the Lua module, kept only when it is short plain text (it is ours, but never trusted to be). */
function plain(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  return trimmed.length > 0 && trimmed.length <= 200 && /^[\w .,:;'()/%-]+$/.test(trimmed) ? trimmed : null;
}

/** The sentence for an answer that is not 2xx: `parsed` is its JSON body, or null (nginx's HTML page, say). */
export function describeAnswer(method: string, path: string, status: number, parsed: unknown): ControlError {
  const what = `nginx did not take ${method} ${path}`;
  const body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  const refusal = status === 507 && body ? toRefusal(body) : null;
  if (refusal) return new ControlError(`${what}: ${describeRefusal(refusal)}.`, status, refusal);
  const reason = plain(body?.error);
  return new ControlError(`${what}: ${reason ?? describeStatus(status)}.`, status);
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
              // Not JSON: nginx's own error page (e.g. the Lua module failed to load, or the body was too large).
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300 && parsed !== null) {
              resolve(parsed as T);
              return;
            }
            reject(
              status >= 200 && status < 300
                ? new ControlError(`nginx did not take ${method} ${path}: its answer was not JSON.`, status)
                : describeAnswer(method, path, status, parsed),
            );
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(
          new ControlError(
            `nginx did not take ${method} ${path}: its control socket gave no answer within ${timeoutMs / 1000} s.`,
            null,
          ),
        ),
      );
      req.on('error', (err) =>
        reject(
          err instanceof ControlError
            ? err
            : new ControlError(
                `nginx did not take ${method} ${path}: its control socket cannot be reached (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
                null,
              ),
        ),
      );
      req.end(payload);
    });
  }
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}
