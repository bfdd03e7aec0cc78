import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlError, createControlClient } from './control-client.js';

// Whatever nginx answers on its control socket, the control plane's message is one plain sentence: it reaches the
// API's 503 answers and the console, so never nginx's HTML error page.

const NGINX_PAGE = (status: number, title: string) =>
  `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body>\r\n<center><h1>${status} ${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

describe('the control socket client', () => {
  let dir = '';
  let server: Server;
  let socket = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-control-'));
    socket = join(dir, 'control.sock');
    server = createServer((req, res) => {
      const [, status = '200', kind = 'json'] = /^\/(\d+)\/(\w+)/.exec(req.url ?? '') ?? [];
      if (kind === 'hang') return;
      if (kind === 'html') {
        res.writeHead(Number(status), { 'Content-Type': 'text/html' });
        res.end(NGINX_PAGE(Number(status), 'Whatever'));
        return;
      }
      res.writeHead(Number(status), { 'Content-Type': 'application/json' });
      if (kind === 'refusal')
        res.end(
          JSON.stringify({
            error: 'no room',
            dict: 'gw_routes',
            need: 3.5 * 1024 * 1024,
            free: 1024 * 1024,
            free_space: 0.25 * 1024 * 1024,
            capacity: 64 * 1024 * 1024,
            intact: true,
          }),
        );
      else if (kind === 'markup') res.end(JSON.stringify({ error: '<b>bad</b>' }));
      else res.end(JSON.stringify({ error: 'version mismatch', version: 'x' }));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const failure = async (path: string, timeoutMs?: number): Promise<ControlError> => {
    const error = await createControlClient(socket, timeoutMs)
      .post(path, { set: {} })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(ControlError);
    const { message } = error as ControlError;
    expect(message).not.toMatch(/[<>]/);
    expect(message).not.toMatch(/\n/);
    expect(message).toMatch(/^nginx did not take POST \/\S+: .+\.$/);
    return error as ControlError;
  };

  it('turns nginx’s own error pages into a sentence', async () => {
    expect((await failure('/413/html')).message).toBe(
      'nginx did not take POST /413/html: the change is larger than its control socket accepts.',
    );
    expect((await failure('/500/html')).message).toBe(
      'nginx did not take POST /500/html: it failed to answer (status 500; its error log says why).',
    );
    for (const status of [502, 503, 404, 400]) expect((await failure(`/${status}/html`)).status).toBe(status);
  });

  it('says how full the dictionary is when a change does not fit, and keeps the figures for the caller', async () => {
    const error = await failure('/507/refusal');
    expect(error.message).toBe(
      'nginx did not take POST /507/refusal: its routes dictionary (64 MiB, 0.3 MiB free) has no room for a change of 3.5 MiB.',
    );
    expect(error.refusal).toMatchObject({ dict: 'gw_routes', capacity: 64 * 1024 * 1024, intact: true });
  });

  it('keeps the Lua module’s own short reasons, and nothing that looks like markup', async () => {
    expect((await failure('/409/json')).message).toBe('nginx did not take POST /409/json: version mismatch.');
    expect((await failure('/400/markup')).message).toBe(
      'nginx did not take POST /400/markup: it refused the request (status 400).',
    );
  });

  it('says so when the socket is missing or silent', async () => {
    expect((await failure('/200/hang', 200)).message).toBe(
      'nginx did not take POST /200/hang: its control socket gave no answer within 0.2 s.',
    );
    const missing = await createControlClient(join(dir, 'none.sock'))
      .post('/routes', {})
      .catch((err: unknown) => err as Error);
    expect((missing as Error).message).toBe(
      'nginx did not take POST /routes: its control socket cannot be reached (ENOENT).',
    );
  });
});
