import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../env.js';
import { warnIfPlainHttpBeyondLoopback } from './listen-warning.js';
import { createLogger } from './logger.js';

function captureLog() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return {
    lines,
    logger: createLogger('info', sink),
    warnings: () =>
      lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; addresses: string[] })
        .filter((entry) => entry.level === 40),
  };
}

describe('plain-HTTP listen warning', () => {
  it('stays silent when the control plane listens on its default address', async () => {
    const { logger, lines } = captureLog();
    const app = Fastify();
    try {
      await app.listen({ host: parseConfig({}).host, port: 0 });
      expect(app.addresses()).toEqual([expect.objectContaining({ address: '127.0.0.1' })]);
      expect(warnIfPlainHttpBeyondLoopback(logger, app.addresses())).toBe(false);
    } finally {
      await app.close();
    }
    expect(lines).toEqual([]);
  });

  it.each([['127.0.0.1'], ['127.8.9.1'], ['::1'], ['::ffff:127.0.0.1']])('stays silent on loopback %s', (address) => {
    const { logger, lines } = captureLog();
    expect(warnIfPlainHttpBeyondLoopback(logger, [{ address, port: 3000 }])).toBe(false);
    expect(lines).toEqual([]);
  });

  it('warns once, naming every address beyond loopback and the setting to change', () => {
    const { logger, warnings } = captureLog();
    const bound = [
      { address: '0.0.0.0', port: 3000 },
      { address: '::', port: 3000 },
      { address: '127.0.0.1', port: 3000 },
      { address: '192.0.2.10', port: 3000 },
    ];
    expect(warnIfPlainHttpBeyondLoopback(logger, bound)).toBe(true);
    const [warning, ...more] = warnings();
    expect(more).toEqual([]);
    expect(warning?.addresses).toEqual(['0.0.0.0:3000', '[::]:3000', '192.0.2.10:3000']);
    expect(warning?.msg).toMatch(
      /^The control plane serves plain HTTP on 0\.0\.0\.0:3000, \[::\]:3000, 192\.0\.2\.10:3000, beyond loopback: /,
    );
    expect(warning?.msg).toContain('set POSTERN_HOST=127.0.0.1');
  });
});
