// Tiny backends a test runs inside a namespace: `node echo-server.mjs http|tcp|udp HOST PORT LABEL`.
// Every answer carries LABEL so a test knows which backend (which node) answered. Prints "listening" when ready.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { createSocket } from 'node:dgram';

const [kind, host, portText, label] = process.argv.slice(2);
const port = Number(portText);
const ready = () => process.stdout.write(`listening ${kind} ${host}:${port}\n`);
const CHUNK = Buffer.alloc(64 * 1024, 120);

function streamBytes(res, total) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
  let left = total;
  const pump = () => {
    while (left > 0) {
      const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

function trickle(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  const timer = setInterval(() => res.write(`data: ${label}\n\n`), 100);
  res.on('close', () => clearInterval(timer));
}

if (kind === 'http') {
  createHttpServer((req, res) => {
    // /bytes/N streams N bytes: the throughput benchmark's payload.
    const bytes = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
    if (bytes) return streamBytes(res, Number(bytes[1]));
    // /trickle never ends: a line every 100 ms, like an event stream (only the gateway can close it).
    if (req.url === '/trickle') return trickle(res);
    // /status/NNN answers with that status: traffic counting by status class.
    const status = /^\/status\/([2-5]\d\d)$/.exec(req.url ?? '');
    res.writeHead(status ? Number(status[1]) : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ label, method: req.method, url: req.url, headers: req.headers }));
  }).listen(port, host, ready);
} else if (kind === 'tcp') {
  createTcpServer((socket) => {
    socket.on('data', (data) => socket.write(`${label}:${data}`));
    socket.on('error', () => socket.destroy());
  }).listen(port, host, ready);
} else if (kind === 'udp') {
  const socket = createSocket('udp4');
  socket.on('message', (message, from) => socket.send(`${label}:${message}`, from.port, from.address));
  socket.bind(port, host, ready);
} else {
  process.stderr.write(`unknown backend kind ${kind}\n`);
  process.exit(64);
}
