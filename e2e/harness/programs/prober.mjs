// What a client on the internet sees while the gateway changes, restarts or heals; run inside the client namespace.
//   probe INTERVAL_MS SPEC...        one fresh request per SPEC every INTERVAL_MS; prints "fail SPEC ERROR" per failed
//                                    probe, and "report ok=N fail=M" when a line "report" arrives on stdin
//   hold-http IP PORT HOST PATH      one HTTPS request whose response never ends; prints "open" at the first bytes,
//                                    "chunks N" every 500 ms, "closed" when the gateway ends it
//   hold-tcp IP PORT                 one TCP session to an echo service, a line every 200 ms; prints "open",
//                                    "replies N" every 500 ms, "closed" when the gateway ends it
// SPEC: http:IP:PORT:HOST:PATH (HTTPS, certificate not checked, 200 expected) or tcp:IP:PORT (echo expected).
import { request } from 'node:https';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const [mode, ...args] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);

function probeHttp(ip, port, host, path) {
  return new Promise((resolve) => {
    const req = request(
      {
        host: ip,
        port,
        path,
        servername: host,
        headers: { Host: host },
        rejectUnauthorized: false,
        agent: false,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? null : `status ${res.statusCode}`));
        res.on('error', (error) => resolve(error.message));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolve(error.message));
    req.end();
  });
}

function probeTcp(ip, port) {
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port });
    const done = (error) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(2000, () => done('timeout'));
    socket.once('connect', () => socket.write('probe'));
    socket.once('data', () => done(null));
    socket.once('error', (error) => done(error.message));
    socket.once('close', () => done('closed without an answer'));
  });
}

if (mode === 'probe') {
  const [intervalText, ...specs] = args;
  let ok = 0;
  let failed = 0;
  const probeOne = async (spec) => {
    const [kind, ip, port, host, path] = spec.split(':');
    const error = kind === 'http' ? await probeHttp(ip, Number(port), host, path) : await probeTcp(ip, Number(port));
    if (error === null) ok++;
    else {
      failed++;
      say(`fail ${spec} ${new Date().toISOString()} ${error}`);
    }
  };
  setInterval(() => {
    for (const spec of specs) void probeOne(spec);
  }, Number(intervalText));
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'report') say(`report ok=${ok} fail=${failed}`);
  });
  say('probing');
} else if (mode === 'hold-http') {
  const [ip, port, host, path] = args;
  let chunks = 0;
  const req = request(
    {
      host: ip,
      port: Number(port),
      path,
      servername: host,
      headers: { Host: host },
      rejectUnauthorized: false,
      agent: false,
    },
    (res) => {
      res.on('data', () => {
        chunks++;
        if (chunks === 1) say('open');
      });
      res.on('close', () => {
        say('closed');
        process.exit(0);
      });
      res.on('error', () => undefined);
    },
  );
  req.on('error', (error) => {
    say(`error ${error.message}`);
    say('closed');
    process.exit(0);
  });
  req.end();
  setInterval(() => say(`chunks ${chunks}`), 500);
} else if (mode === 'hold-tcp') {
  const [ip, port] = args;
  let replies = 0;
  const socket = connect({ host: ip, port: Number(port) }, () => {
    say('open');
    setInterval(() => socket.write('tick\n'), 200);
    setInterval(() => say(`replies ${replies}`), 500);
  });
  socket.on('data', () => {
    replies++;
  });
  socket.on('error', (error) => say(`error ${error.message}`));
  socket.on('close', () => {
    say('closed');
    process.exit(0);
  });
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(64);
}
