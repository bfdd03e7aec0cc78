import { connect } from 'node:tls';

/**
 * One HTTPS request to nginx itself, as a client would make it, for the console's host: proves that nginx's workers
 * (an unprivileged user) complete a TLS handshake and answer. They read nothing from the data dir (certificates reach
 * them in memory), so this holds wherever the checkout lives; if it does not, the reason must be loud, not hidden
 * in nginx's error log. Resolves with what went wrong, or null.
 */
export function checkHttps(
  address: string,
  port: number,
  servername: string,
  timeoutMs = 5000,
): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(
      { host: address, port, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] },
      () => {
        socket.write(`HEAD /api/health HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
      },
    );
    let answer = '';
    const done = (problem: string | null): void => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n'))
        done(/^HTTP\/1\.[01] \d{3}/.test(answer) ? null : `unexpected answer: ${answer.slice(0, 80)}`);
    });
    socket.on('error', (err: Error) => done(err.message));
    socket.on('close', () => done(answer === '' ? 'the connection closed without an answer' : null));
  });
}
