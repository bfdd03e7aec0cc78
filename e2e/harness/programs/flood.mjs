// One abusive client and one bystander, each run inside a namespace of the lab (e2e/system/http-routing.test.ts,
// bench/listener.ts).
//   handshakes IP PORT COUNT SOURCE [REOPEN_MS]     (SOURCE '-': the namespace's own address)
//       keeps COUNT connections from SOURCE open to IP:PORT, each having sent the first 6 bytes of a TLS handshake
//       (a record header and the ClientHello's type) and nothing after; one the gateway closes is opened again after
//       REOPEN_MS (default 1000; -1: never), as a persistent attacker would. Prints every 500 ms
//       "flood started=N held=N closed=N failed=N pending=N errors=WHEN:CODE:N,..." (held: connected now; pending:
//       connect not answered yet, e.g. SYNs the gateway dropped, which this kernel sends again).
//   requests IP PORT HOST PATH INTERVAL_MS SOURCE
//       one fresh HTTPS request (new connection, new handshake) every INTERVAL_MS from SOURCE, 5 s timeout. A line
//       "report" on stdin closes the current window: once its requests have finished it prints
//       "report ok=N fail=M p50=X p99=Y max=Z" (milliseconds of the successful ones), before it "error N E" per
//       failure kind and "latencies A,B,..." (each successful request's milliseconds).
import { request } from 'node:https';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const [mode, ...args] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);

/** TLS record: handshake (22), version 3.1, length 512; then the handshake type ClientHello (1). Nothing more. */
const PARTIAL_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]);
const BATCH = 250;

if (mode === 'handshakes') {
  const [ip, portText, countText, source, reopenText = '1000'] = args;
  const reopenMs = Number(reopenText);
  const port = Number(portText);
  const count = Number(countText);
  const stats = { started: 0, held: 0, closed: 0, failed: 0, pending: 0 };
  const errors = new Map();
  const open = () => {
    stats.started++;
    stats.pending++;
    let isConnected = false;
    // No source address given (the namespace's own): bind() with a port search per socket costs the attacker's
    // kernel more the more sockets it holds, which this machine's CPUs would pay for the gateway's.
    const socket = connect({ host: ip, port, ...(source === '-' ? {} : { localAddress: source }) });
    socket.on('connect', () => {
      isConnected = true;
      stats.pending--;
      stats.held++;
      socket.write(PARTIAL_HELLO);
    });
    socket.on('data', () => undefined);
    socket.on('error', (error) => {
      const key = `${isConnected ? 'after' : 'before'}:${error.code ?? error.message}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    });
    socket.on('close', () => {
      if (isConnected) {
        stats.held--;
        stats.closed++;
      } else {
        stats.pending--;
        stats.failed++;
      }
      if (reopenMs >= 0) setTimeout(open, reopenMs).unref();
    });
  };
  // In batches, so the event loop keeps printing while the sockets are made.
  let made = 0;
  const more = () => {
    for (let i = 0; i < BATCH && made < count; i++, made++) open();
    if (made < count) setImmediate(more);
  };
  more();
  const print = () =>
    say(
      `flood started=${stats.started} held=${stats.held} closed=${stats.closed} failed=${stats.failed} pending=${stats.pending} errors=${[...errors].map(([k, n]) => `${k}:${n}`).join(',')}`,
    );
  setInterval(print, 500);
  print();
} else if (mode === 'requests') {
  const [ip, portText, host, path, intervalText, source] = args;
  let window = { ok: [], failures: new Map(), inFlight: 0, done: null };
  const once = (current) => {
    const started = performance.now();
    current.inFlight++;
    const finish = (error) => {
      if (error === null) current.ok.push(performance.now() - started);
      else current.failures.set(error, (current.failures.get(error) ?? 0) + 1);
      current.inFlight--;
      if (current.inFlight === 0) current.done?.();
    };
    const req = request(
      {
        host: ip,
        port: Number(portText),
        path,
        servername: host,
        headers: { Host: host },
        localAddress: source,
        rejectUnauthorized: false,
        agent: false,
        timeout: 5000,
      },
      (res) => {
        res.resume();
        res.on('end', () => finish(res.statusCode === 200 ? null : `status ${res.statusCode}`));
        res.on('error', (error) => finish(error.message));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => finish(error.code ?? error.message));
    req.end();
  };
  setInterval(() => once(window), Number(intervalText));
  const percentile = (sorted, p) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line !== 'report') return;
    const closed = window;
    window = { ok: [], failures: new Map(), inFlight: 0, done: null };
    const print = () => {
      const sorted = [...closed.ok].sort((a, b) => a - b);
      const fail = [...closed.failures.values()].reduce((a, b) => a + b, 0);
      for (const [error, n] of closed.failures) say(`error ${n} ${error}`);
      say(`latencies ${sorted.map((v) => v.toFixed(1)).join(',')}`);
      const ms = (v) => v.toFixed(1);
      say(
        `report ok=${sorted.length} fail=${fail} p50=${ms(percentile(sorted, 50))} p99=${ms(percentile(sorted, 99))} max=${ms(sorted.at(-1) ?? 0)}`,
      );
    };
    if (closed.inFlight === 0) print();
    else closed.done = print;
  });
  say('requesting');
} else {
  say(`unknown mode ${mode}`);
  process.exit(2);
}
